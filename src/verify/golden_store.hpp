// Golden outputs: per (target, workload, seed), a fingerprint of the fp64 reference output —
// its size and values at fixed sampled positions. A later run whose reference drifts from its
// golden (an edited reference, a changed input generator) is flagged O6.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aisp::verify {

struct golden_fingerprint {
  std::size_t elements = 0;
  std::vector<std::size_t> positions;
  std::vector<double> values;
};

[[nodiscard]] golden_fingerprint fingerprint_of(const std::vector<double>& reference, std::uint64_t seed);

// "" when `current` matches `golden` (values within 1e-9 relative: libm may differ in the last
// bit between machines); otherwise what drifted.
[[nodiscard]] std::string golden_drift(const golden_fingerprint& golden, const golden_fingerprint& current);

class golden_store {
 public:
  // A missing file is an empty store; a malformed one throws contract_error.
  explicit golden_store(std::string path);
  [[nodiscard]] const golden_fingerprint* find(const std::string& key) const;
  void put(const std::string& key, golden_fingerprint fingerprint);
  void save() const;
  [[nodiscard]] static std::string key(const std::string& target, const std::string& workload, const std::string& output,
                                       std::uint64_t seed);

 private:
  std::string path_;
  std::map<std::string, golden_fingerprint> entries_;
};

}  // namespace aisp::verify
