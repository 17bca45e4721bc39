// Text form of single field values: integers and booleans in decimal, doubles as the shortest text that
// reads back exactly (config/number_text.h), text with backslash escapes for tab, newline and backslash.
#include "results/field_text.h"

#include <cstdlib>
#include <variant>

#include "config/number_text.h"
#include "runtime/error.h"

namespace ft::field_text {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

double number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  FT_REQUIRE(!text.empty() && *end == '\0', what, ": '", text, "' is not a number");
  return value;
}

std::int64_t integer(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  FT_REQUIRE(!text.empty() && *end == '\0', what, ": '", text, "' is not an integer");
  return value;
}

}  // namespace

std::string format(const FieldRef& ref) {
  struct Visitor {
    std::string operator()(int* v) const { return std::to_string(*v); }
    std::string operator()(bool* v) const { return *v ? "1" : "0"; }
    std::string operator()(std::int64_t* v) const { return std::to_string(*v); }
    std::string operator()(double* v) const { return shortest_number(*v); }
    std::string operator()(std::string* v) const { return escape(*v); }
  };
  return std::visit(Visitor{}, ref);
}

void parse(const FieldRef& ref, const std::string& text, const std::string& what) {
  struct Visitor {
    const std::string& text;
    const std::string& what;
    void operator()(int* v) const { *v = static_cast<int>(integer(text, what)); }
    void operator()(bool* v) const { *v = integer(text, what) != 0; }
    void operator()(std::int64_t* v) const { *v = integer(text, what); }
    void operator()(double* v) const { *v = number(text, what); }
    void operator()(std::string* v) const { *v = text; }
  };
  std::visit(Visitor{text, what}, ref);
}

std::vector<std::vector<std::string>> split_lines(const std::string& text) {
  std::vector<std::vector<std::string>> lines;
  if (text.empty()) return lines;
  lines.emplace_back(1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') lines.emplace_back(1);
    else if (c == '\t') lines.back().emplace_back();
    else if (c == '\\' && i + 1 < text.size()) {
      const char n = text[++i];
      lines.back().back() += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else lines.back().back() += c;
  }
  return lines;
}

}  // namespace ft::field_text
