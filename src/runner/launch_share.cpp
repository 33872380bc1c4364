#include "runner/launch_share.hpp"

namespace aisp {

std::vector<pair_request> launch_share(const std::vector<pair_request>& requests, int launch_rank, int launch_size) {
  std::vector<pair_request> share;
  std::vector<pair_request> multi_rank;  // after the single pairs: they wait for every share to end
  int dealt = 0;
  for (const auto& request : requests) {
    if (request.declared->gpus() > 1) {
      if (launch_rank == 0) multi_rank.push_back(request);
      continue;
    }
    if (dealt++ % launch_size == launch_rank) share.push_back(request);
  }
  share.insert(share.end(), multi_rank.begin(), multi_rank.end());
  return share;
}

}  // namespace aisp
