// Note [fmt compiled once]: fmt's implementation (format-inl.h), compiled into this one unit.
// With FMT_HEADER_ONLY every unit that formats compiled it again: ~300 units, and 29-49% of a
// heavy unit's compile time on this project's 2-core CI machine (2026-11-29). Debian ships fmt
// as a shared library only, and the binaries carried to the GPU machine must not need one, so
// the library is compiled here. The templates format-inl.h defines and fmt's headers only
// declare are instantiated below, for the types aisp formats (the linker names any missing).
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl<char>(locale_ref loc) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref loc) -> char;
template auto dragonbox::to_decimal<float>(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal<double>(double x) noexcept -> dragonbox::decimal_fp<double>;

}  // namespace detail
FMT_END_NAMESPACE
