#include "src/frontends/torch_export/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tpudoctor::torch_export {
namespace {

// Recursive descent over + - * // and calls; evaluates with checked int64 arithmetic. Any
// unknown symbol, unknown function or overflow makes the value unknown (nullopt) but parsing goes
// on, so every symbol is still collected and the text cleaned.
class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, std::int64_t>& values)
      : s_(text), values_(values) {}

  std::optional<std::int64_t> Parse(bool& ok) {
    auto v = Sum();
    Skip();
    ok = ok_ && pos_ == s_.size();
    return v;
  }
  std::set<std::string> symbols;
  std::string clean;

 private:
  using V = std::optional<std::int64_t>;

  void Skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static V Add(V a, V b, int sign) {
    std::int64_t r;
    if (!a || !b) return std::nullopt;
    if (sign > 0 ? __builtin_add_overflow(*a, *b, &r) : __builtin_sub_overflow(*a, *b, &r))
      return std::nullopt;
    return r;
  }
  static V Mul(V a, V b) {
    std::int64_t r;
    if (!a || !b || __builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
    return r;
  }
  static V FloorDiv(V a, V b) {
    if (!a || !b || *b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
    std::int64_t q = *a / *b;
    if ((*a % *b != 0) && ((*a < 0) != (*b < 0))) --q;
    return q;
  }

  V Sum() {
    V v = Product();
    for (;;) {
      if (Eat('+')) {
        clean += "+";
        v = Add(v, Product(), 1);
      } else if (Eat('-')) {
        clean += "-";
        v = Add(v, Product(), -1);
      } else {
        return v;
      }
    }
  }
  V Product() {
    V v = Atom();
    for (;;) {
      Skip();
      if (s_.substr(pos_, 2) == "//") {
        pos_ += 2;
        clean += "//";
        v = FloorDiv(v, Atom());
      } else if (Eat('*')) {
        clean += "*";
        v = Mul(v, Atom());
      } else {
        return v;
      }
    }
  }
  V Atom() {
    if (++depth_ > 64) {
      ok_ = false;
      pos_ = s_.size();
      return std::nullopt;
    }
    V v = AtomInner();
    --depth_;
    return v;
  }
  V AtomInner() {
    Skip();
    if (pos_ >= s_.size()) {
      ok_ = false;
      return std::nullopt;
    }
    if (Eat('-')) {
      clean += "-";
      return Mul(-1, Atom());
    }
    if (Eat('(')) {
      clean += "(";
      V v = Sum();
      if (!Eat(')')) ok_ = false;
      clean += ")";
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      std::int64_t n = 0;
      bool overflow = false;
      const std::size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        overflow |=
            __builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, s_[pos_] - '0', &n);
        ++pos_;
      }
      clean += s_.substr(start, pos_ - start);
      return overflow ? V() : V(n);
    }
    const std::size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) {
      ok_ = false;
      pos_ = s_.size();
      return std::nullopt;
    }
    const std::string name(s_.substr(start, pos_ - start));
    if (Eat('(')) return Call(name);
    symbols.insert(name);
    clean += name;
    auto it = values_.find(name);
    return it == values_.end() ? V() : V(it->second);
  }
  // Symbol('s0', positive=True), Integer(3), FloorDiv(a, b), Mod(a, b), Max/Min(a, b).
  V Call(const std::string& fn) {
    if (fn == "Symbol") {
      Skip();
      const char quote = pos_ < s_.size() ? s_[pos_] : 0;
      if (quote != '\'' && quote != '"') return Fail();
      const std::size_t end = s_.find(quote, pos_ + 1);
      if (end == std::string_view::npos) return Fail();
      const std::string name(s_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      SkipToClose();
      symbols.insert(name);
      clean += name;
      auto it = values_.find(name);
      return it == values_.end() ? V() : V(it->second);
    }
    if (fn == "Integer") {
      V v = Atom();
      if (!Eat(')')) ok_ = false;
      return v;
    }
    clean += fn + "(";
    V a = Sum();
    V b;
    if (Eat(',')) {
      clean += ", ";
      b = Sum();
    }
    if (!Eat(')')) ok_ = false;
    clean += ")";
    if (fn == "FloorDiv") return FloorDiv(a, b);
    if (fn == "Mod" && a && b && *b != 0 && !(*a == INT64_MIN && *b == -1)) return *a % *b;
    if (fn == "Max" && a && b) return std::max(*a, *b);
    if (fn == "Min" && a && b) return std::min(*a, *b);
    return std::nullopt;
  }
  // Skips `, positive=True, integer=True)` after a Symbol's name.
  void SkipToClose() {
    const std::size_t end = s_.find(')', pos_);
    if (end == std::string_view::npos) {
      ok_ = false;
      pos_ = s_.size();
      return;
    }
    pos_ = end + 1;
  }
  V Fail() {
    ok_ = false;
    pos_ = s_.size();
    return std::nullopt;
  }

  std::string_view s_;
  const std::map<std::string, std::int64_t>& values_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  bool ok_ = true;
};

}  // namespace

SymDim ParseSymDim(std::string_view expr, const std::map<std::string, std::int64_t>& values) {
  Parser p(expr, values);
  bool ok = false;
  const auto v = p.Parse(ok);
  SymDim out;
  out.symbols = p.symbols;
  if (ok && v && *v >= 0) {
    out.dim = Dim::Static(*v);
  } else if (ok && std::any_of(p.symbols.begin(), p.symbols.end(),
                               [&](const std::string& s) { return !values.count(s); })) {
    out.dim = Dim::Symbol(p.clean);  // waits for a value
  } else {
    out.dim = Dim::Unknown();  // malformed, overflowing or negative
  }
  return out;
}

}  // namespace tpudoctor::torch_export
