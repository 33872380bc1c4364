#include "python_bridge/python_state_watch.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "python_bridge/python_runtime.hpp"

namespace aisp::python {

// Note [watched python state]
// The first Python state probes called aisp._bridge functions that read torch.backends and gc
// through their Python names. A red team's pair file replaced those functions (and could as well
// have replaced torch.backends.mkldnn or gc.get_threshold), so a baseline that had turned
// oneDNN off read as untouched (round eight, 2026-12-04). Now the worker takes, before any pair
// file is imported, the builtins that read the settings (torch._C's getters, gc's, sys's) and
// the objects torch's public functions are, and keeps them here, out of Python's reach: a
// reading calls the kept builtins, and torch's functions are compared by identity with the kept
// objects (a baseline that rebinds torch.nn.functional.gelu to a slower form reads as
// "rebound_functions"). What is still open: ctypes writes into torch's own memory.
namespace {

struct reader {
  std::string group;
  std::string key;
  // "bool", "text", "ints" (a number, or a list of them: the numbers in its text), or "not <text>"
  // (true where the reading differs from <text>)
  std::string kind;
  object* function = nullptr;
  object* arguments = nullptr;
};

struct watched_function {
  object* owner = nullptr;
  std::string name;
  object* original = nullptr;
  std::string label;  // "torch.nn.functional.gelu"
};

struct kept_watch {
  object* everything = nullptr;  // state_watch()'s tuple, kept: every object below is its item
  std::vector<reader> readers;
  std::vector<watched_function> functions;
};

kept_watch& kept() {
  static kept_watch watch;
  return watch;
}

std::string text_of(object* item) {
  const auto& py = functions();
  object* text = item != nullptr ? py.str(item) : nullptr;
  const char* utf8 = text != nullptr ? py.as_utf8(text) : nullptr;
  std::string copied = utf8 != nullptr ? utf8 : "";
  if (text != nullptr) py.dec_ref(text);
  return copied;
}

// Each `width`-tuple of a tuple of them, made into a T by `make(item)` (item(i): the i-th, borrowed).
template <class T, class Make>
std::vector<T> entries_of(object* tuple, long width, const char* what, Make make) {
  const auto& py = functions();
  std::vector<T> made;
  for (long i = 0; i < py.tuple_size(tuple); ++i) {
    object* entry = py.tuple_item(tuple, i);
    if (entry == nullptr || py.tuple_size(entry) != width)
      throw std::runtime_error(std::string("state_watch: ") + what + " is not a " + std::to_string(width) + "-tuple");
    made.push_back(make([&](long at) { return py.tuple_item(entry, at); }));
  }
  return made;
}

// ((group, key, kind, function, arguments), ...)
std::vector<reader> readers_of(object* tuple) {
  return entries_of<reader>(tuple, 5, "a reader", [](auto item) {
    return reader{text_of(item(0)), text_of(item(1)), text_of(item(2)), item(3), item(4)};
  });
}

// ((owner, name, original, label), ...)
std::vector<watched_function> functions_of(object* tuple) {
  return entries_of<watched_function>(tuple, 4, "a watched function", [](auto item) {
    return watched_function{item(0), text_of(item(1)), item(2), text_of(item(3))};
  });
}

// "(700, 10, 10)" -> [700, 10, 10]; "3" -> 3.
nlohmann::json numbers_in(const std::string& text) {
  nlohmann::json numbers = nlohmann::json::array();
  long long value = 0;
  bool in_number = false;
  for (const char c : text + " ") {
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      in_number = true;
    } else if (in_number) {
      numbers.push_back(value);
      value = 0;
      in_number = false;
    }
  }
  return numbers.size() == 1 && text.find('(') == std::string::npos ? numbers[0] : numbers;
}

nlohmann::json reading(const reader& r) {
  const auto& py = functions();
  object* result = py.call_object(r.function, r.arguments);
  if (result == nullptr) {
    py.clear_error();
    return "unreadable";
  }
  const std::string text = text_of(result);
  py.dec_ref(result);
  if (r.kind == "bool") return text == "True";
  if (r.kind == "ints") return numbers_in(text);
  if (r.kind.starts_with("not ")) return text != r.kind.substr(4);
  return text;
}

// The watched functions that are no longer the objects kept, by "owner.name".
nlohmann::json rebound(const std::vector<watched_function>& watched) {
  const auto& py = functions();
  constexpr std::size_t named = 8;  // the rest counted: the reading is compared, and shown in a message
  nlohmann::json names = nlohmann::json::array();
  std::size_t more = 0;
  for (const auto& w : watched) {
    object* now = py.get_attr(w.owner, w.name.c_str());
    if (now == nullptr) py.clear_error();
    if (now != w.original) (names.size() < named ? names.push_back(w.label) : void(++more));
    if (now != nullptr) py.dec_ref(now);
  }
  if (more > 0) names.push_back("and " + std::to_string(more) + " more");
  return names;
}

}  // namespace

std::string keep_state_watch() {
  auto& watch = kept();
  if (watch.everything != nullptr) return "";
  try {
    call("state_watch", "()");  // an error comes back as an exception; the tuple is left in the module
  } catch (const std::exception& error) {
    return error.what();
  }
  gil_held gil;
  const auto& py = functions();
  object* module = py.import_module("aisp._bridge");
  object* made = module != nullptr ? py.get_attr(module, "_state_watch") : nullptr;
  if (module != nullptr) py.dec_ref(module);
  if (made == nullptr || py.tuple_size(made) != 2) {
    py.clear_error();
    return "aisp._bridge.state_watch() left no (readers, functions) tuple";
  }
  try {
    watch.readers = readers_of(py.tuple_item(made, 0));
    watch.functions = functions_of(py.tuple_item(made, 1));
  } catch (const std::exception& error) {
    watch.readers.clear();
    watch.functions.clear();
    py.dec_ref(made);
    return error.what();
  }
  watch.everything = made;
  return "";
}

const char* read_watched_state(const std::string& group) {
  static std::map<std::string, std::string> texts;
  auto& text = texts[group];
  const auto& watch = kept();
  nlohmann::json state = nlohmann::json::object();
  if (watch.everything != nullptr) {
    gil_held gil;
    for (const auto& r : watch.readers)
      if (r.group == group) state[r.key] = reading(r);
    if (group == "torch" && !watch.functions.empty()) state["rebound_functions"] = rebound(watch.functions);
  }
  text = state.dump();
  return text.c_str();
}

}  // namespace aisp::python
