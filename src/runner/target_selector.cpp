#include "runner/target_selector.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "aisp/check.hpp"

namespace aisp {
namespace {

std::string known_groups(const registry& pairs) {
  std::set<std::string> groups;
  for (const auto& p : pairs.pairs()) groups.insert(p.group());
  std::string text;
  for (const auto& g : groups) text += (text.empty() ? "" : ", ") + g;
  return text;
}

void add_request(std::vector<pair_request>& requests, const pair& declared, const std::string& variant) {
  auto existing = std::find_if(requests.begin(), requests.end(),
                               [&](const pair_request& r) { return r.declared == &declared; });
  if (existing == requests.end()) {
    requests.push_back({&declared, {}});
    existing = requests.end() - 1;
  } else if (variant.empty()) {
    existing->candidates.clear();  // the whole pair was asked for as well
    return;
  }
  if (!variant.empty()) existing->candidates.push_back(variant);
}

// "a,b" and a quoted "a b" name two targets, as `--targets a b` does.
std::vector<std::string> split_target_words(const std::vector<std::string>& given) {
  std::vector<std::string> words;
  for (const auto& text : given) {
    std::string word;
    for (const char c : text + ",") {
      if (c == ',' || c == ' ' || c == '\t') {
        if (!word.empty()) words.push_back(std::exchange(word, {}));
      } else {
        word += c;
      }
    }
  }
  return words;
}

}  // namespace

std::vector<pair_request> select_targets(const registry& pairs, const std::vector<std::string>& given) {
  std::vector<pair_request> requests;
  for (const auto& word : split_target_words(given)) {
    if (word == "all") {
      for (const auto& p : pairs.pairs()) add_request(requests, p, "");
      continue;
    }
    const auto first = word.find(':');
    const std::string group = word.substr(0, first);
    if (first == std::string::npos) {
      bool found = false;
      for (const auto& p : pairs.pairs()) {
        if (p.group() == group) {
          add_request(requests, p, "");
          found = true;
        }
      }
      AISP_EXPECTS(found, "unknown target '" + word + "' (groups: " + known_groups(pairs) + ")");
      continue;
    }
    const auto second = word.find(':', first + 1);
    const std::string target = word.substr(0, second);
    const pair* declared = pairs.find(target);
    if (declared == nullptr) {
      std::string names;
      for (const auto& p : pairs.pairs()) {
        if (p.group() == group) names += (names.empty() ? "" : ", ") + p.short_name();
      }
      AISP_EXPECTS(false, "unknown target '" + word + "'" +
                              (names.empty() ? " (groups: " + known_groups(pairs) + ")"
                                             : " (" + group + " has: " + names + ")"));
    }
    std::string variant;
    if (second != std::string::npos) {
      variant = word.substr(second + 1);
      AISP_EXPECTS(variant != "baseline", "'" + word + "': the baseline always runs; name a candidate variant");
      bool exists = false;
      std::string names;
      for (const auto& v : declared->variants()) {
        exists = exists || v.name == variant;
        names += (names.empty() ? "" : ", ") + v.name;
      }
      AISP_EXPECTS(exists, "unknown variant '" + variant + "' of " + target + " (has: " + names + ")");
    }
    add_request(requests, *declared, variant);
  }
  // `--targets ''` (an unset shell variable) names nothing: refused rather than a run of no pair.
  AISP_EXPECTS(!requests.empty() || pairs.pairs().empty(), "--targets names no pair (all, a group such as ch07, or group:name)");
  return requests;
}

}  // namespace aisp
