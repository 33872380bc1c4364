// Note [write barrier]: a write to a guarded output after arm() is seen whenever it happens and
// whichever thread makes it; the writer goes on; a write before arm() is run()'s own.
#include "harness/late_write_barrier.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <thread>

namespace aisp {
namespace {

struct page_buffer {
  explicit page_buffer(std::size_t bytes) : data(static_cast<float*>(std::aligned_alloc(4096, bytes))), size(bytes) {}
  ~page_buffer() { std::free(data); }
  float* data;
  std::size_t size;
};

TEST(LateWriteBarrier, NamesAnOutputWrittenByAnotherThreadAfterArm) {
  page_buffer y(3 * 4096);
  page_buffer z(4096);
  late_write_barrier barrier({{"y", y.data, 3 * 4096 - 100}, {"z", z.data, 4096}});
  y.data[0] = 1.0F;  // before arm: run()'s own write
  barrier.arm();
  std::thread helper([&] { y.data[2 * 1024 + 5] = 2.0F; });  // last page of y
  helper.join();
  EXPECT_EQ(y.data[2 * 1024 + 5], 2.0F) << "the helper's write must land";
  EXPECT_EQ(y.data[0], 1.0F);
  const auto written = barrier.release();
  ASSERT_EQ(written.size(), 1U);
  EXPECT_EQ(written[0], "y");
  z.data[0] = 3.0F;  // released: writable, no fault
  EXPECT_EQ(z.data[0], 3.0F);
}

TEST(LateWriteBarrier, ReadsAreFreeAndAQuietCallNamesNothing) {
  page_buffer y(4096);
  y.data[7] = 4.0F;
  late_write_barrier barrier({{"y", y.data, 4096}});
  barrier.arm();
  volatile float seen = y.data[7];
  EXPECT_EQ(seen, 4.0F);
  EXPECT_TRUE(barrier.release().empty());
  EXPECT_TRUE(barrier.release().empty()) << "a second release is a no-op";
}

TEST(LateWriteBarrier, RearmsForTheNextCall) {
  page_buffer y(4096);
  late_write_barrier first({{"y", y.data, 4096}});
  first.arm();
  y.data[1] = 1.0F;  // this thread, after arm: a late write all the same
  EXPECT_EQ(first.release(), std::vector<std::string>{"y"});
  late_write_barrier second({{"y", y.data, 4096}});
  second.arm();
  EXPECT_TRUE(second.release().empty()) << "the previous call's fault must not carry over";
}

TEST(LateWriteBarrier, RefusesUnalignedOutputs) {
  page_buffer y(2 * 4096);
  EXPECT_THROW(late_write_barrier({{"y", y.data + 1, 4096}}), std::exception);
}

TEST(LateWriteBarrierDeathTest, AFaultOutsideEveryOutputStillCrashes) {
  page_buffer y(4096);
  EXPECT_DEATH(
      {
        late_write_barrier barrier({{"y", y.data, 4096}});
        barrier.arm();
        *static_cast<volatile int*>(nullptr) = 1;
      },
      "");
}

}  // namespace
}  // namespace aisp
