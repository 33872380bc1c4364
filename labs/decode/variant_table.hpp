// A constexpr table of kernel shapes picked by a runtime index: each entry is a template
// argument (a kernel instantiation), so an index becomes a call with the entry as a constant.
#pragma once

#include <type_traits>
#include <utility>

namespace aisp::decode {

// f(std::integral_constant<int, V>{}) for the V in [0, Count) equal to `index` (none if outside).
template <int Count, class F>
void with_variant(int index, F&& f) {
  [&]<int... V>(std::integer_sequence<int, V...>) { ((V == index ? f(std::integral_constant<int, V>{}) : void()), ...); }(
      std::make_integer_sequence<int, Count>{});
}

// f(std::integral_constant<int, V>{}) for every V in [0, Count).
template <int Count, class F>
void for_each_variant(F&& f) {
  [&]<int... V>(std::integer_sequence<int, V...>) { (f(std::integral_constant<int, V>{}), ...); }(std::make_integer_sequence<int, Count>{});
}

}  // namespace aisp::decode
