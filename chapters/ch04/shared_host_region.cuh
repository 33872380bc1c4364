// Pinned host memory shared by the ranks' worker processes: one slot per rank, the staging area of
// the host-staged baselines (ch04:host_staged_allreduce, ch04:p2p_copy). Made in setup, which every
// rank runs together: rank 0 creates a POSIX shared memory object under a fresh name and sends the
// name to the others (exchange_records); each rank maps it and pins it for DMA (cudaHostRegister).
#pragma once

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"
#include "rank_sync.cuh"

namespace aisp::ch04 {

class shared_host_region {
 public:
  // Slots start on page boundaries: the copy engines' DMA runs from an aligned start.
  static constexpr std::size_t slot_alignment = 4096;

  shared_host_region(run_context& ctx, std::size_t slot_bytes)
      : slot_stride_((slot_bytes + slot_alignment - 1) / slot_alignment * slot_alignment),
        bytes_(slot_stride_ * static_cast<std::size_t>(ctx.world_size())) {
    std::string name;
    try {
      name = ctx.rank() == 0 ? create() : std::string();
      map(ctx, name);
    } catch (...) {
      if (ctx.rank() == 0 && !name.empty()) shm_unlink(name.c_str());  // leave nothing in /dev/shm
      throw;
    }
    // Every rank has the object mapped: rank 0 removes the name, so nothing is left in /dev/shm
    // whatever happens next; the pages live until the last rank unmaps them.
    static_cast<void>(exchange_records(ctx, handshake_record{}));
    if (ctx.rank() == 0) shm_unlink(name.c_str());
  }
  ~shared_host_region() {  // release statuses are dropped: nobody is left to tell
    static_cast<void>(cudaHostUnregister(base_));
    munmap(base_, bytes_);
  }
  shared_host_region(const shared_host_region&) = delete;
  shared_host_region& operator=(const shared_host_region&) = delete;

  [[nodiscard]] void* slot(int rank) const { return base_ + static_cast<std::size_t>(rank) * slot_stride_; }

 private:
  // Rank 0: a new object of bytes_, its pages reserved now, so a /dev/shm too small fails here
  // and not as a SIGBUS in the first copy. Returns its name.
  std::string create() const {
    const std::string name = fresh_name();
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    AISP_EXPECTS(fd >= 0, "shm_open(" + name + ") failed: " + std::strerror(errno));
    const int reserved = ftruncate(fd, static_cast<off_t>(bytes_)) == 0 ? posix_fallocate(fd, 0, static_cast<off_t>(bytes_)) : errno;
    close(fd);
    if (reserved != 0) {
      shm_unlink(name.c_str());
      AISP_EXPECTS(false, "reserving " + std::to_string(bytes_) + " bytes for " + name + " in /dev/shm failed: " + std::strerror(reserved));
    }
    return name;
  }

  // Every rank: rank 0 sends the name after it made the object, so it exists when it arrives;
  // each rank maps it and pins it, so the copies are DMA at full PCIe speed and asynchronous.
  void map(run_context& ctx, std::string& name) {
    handshake_record mine{};
    std::memcpy(mine.data(), name.c_str(), name.size() + 1);
    const auto records = exchange_records(ctx, mine);
    const auto* sent = reinterpret_cast<const char*>(records[0].data());
    name.assign(sent, strnlen(sent, handshake_record_bytes));
    const int fd = shm_open(name.c_str(), O_RDWR, 0600);
    AISP_EXPECTS(fd >= 0, "shm_open(" + name + ") of rank 0's region failed: " + std::strerror(errno));
    struct stat status {};
    const bool sized = fstat(fd, &status) == 0 && static_cast<std::size_t>(status.st_size) == bytes_;
    void* mapped = sized ? mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    AISP_EXPECTS(sized, name + " is not " + std::to_string(bytes_) + " bytes: not this communicator's region");
    AISP_EXPECTS(mapped != MAP_FAILED, "mmap of " + name + " failed: " + std::strerror(errno));
    const cudaError_t pinned = cudaHostRegister(mapped, bytes_, cudaHostRegisterPortable);
    if (pinned != cudaSuccess) munmap(mapped, bytes_);
    AISP_CUDA_CHECK(pinned);
    base_ = static_cast<unsigned char*>(mapped);
  }

  // Unique per communicator and per setup: this worker's pid, a per-process count, and random bits
  // (a name left by a crashed run of an earlier process with the same pid cannot collide).
  static std::string fresh_name() {
    static std::atomic<unsigned> made{0};
    std::random_device entropy;
    char name[64];
    std::snprintf(name, sizeof(name), "/aisp_ch04_%d_%u_%08x", static_cast<int>(getpid()), made.fetch_add(1), entropy());
    return name;
  }

  std::size_t slot_stride_;
  std::size_t bytes_;
  unsigned char* base_ = nullptr;
};

}  // namespace aisp::ch04
