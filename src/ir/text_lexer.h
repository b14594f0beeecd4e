// Tokens of the IR text form (see include/tpudoctor/ir/text.h). Private to src/ir.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace tpudoctor {

enum class TokKind { kIdent, kInt, kFloat, kString, kPunct, kError, kEnd };

struct Token {
  TokKind kind = TokKind::kEnd;
  std::string text;  // strings are unescaped
  int line = 1;
  int col = 1;
};

// One token of lookahead; `#` starts a comment that runs to the end of the line.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) { current_ = Scan(); }
  const Token& Peek() const { return current_; }
  Token Next() {
    Token t = std::move(current_);
    current_ = Scan();
    return t;
  }

 private:
  char At(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  void Advance() {
    if (At(pos_) == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  static bool IdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }

  Token Scan() {
    for (;;) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
        Advance();
      if (At(pos_) != '#') break;
      while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
    }
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= text_.size()) return t;
    const char c = text_[pos_];
    if (c == '"') return ScanString(t);
    const bool neg = c == '-' && (std::isdigit(static_cast<unsigned char>(At(pos_ + 1))) ||
                                  text_.substr(pos_ + 1, 3) == "inf");
    if (std::isdigit(static_cast<unsigned char>(c)) || neg) return ScanNumber(t);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = TokKind::kIdent;
      while (pos_ < text_.size() && IdentChar(text_[pos_])) {
        t.text += text_[pos_];
        Advance();
      }
      if (t.text == "nan" || t.text == "inf") t.kind = TokKind::kFloat;
      return t;
    }
    t.kind = TokKind::kPunct;
    t.text = std::string(1, c);
    Advance();
    return t;
  }

  Token ScanNumber(Token t) {
    t.kind = TokKind::kInt;
    if (text_[pos_] == '-') {
      t.text += '-';
      Advance();
    }
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      const bool exp_sign = (c == '-' || c == '+') && !t.text.empty() &&
                            (t.text.back() == 'e' || t.text.back() == 'E');
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || exp_sign)) break;
      if (c == '.' || c == 'e' || c == 'E' || c == 'n' || c == 'i') t.kind = TokKind::kFloat;
      t.text += c;
      Advance();
    }
    return t;
  }

  Token ScanString(Token t) {
    t.kind = TokKind::kString;
    Advance();  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_];
      if (c == '\\' && pos_ + 1 < text_.size()) {
        Advance();
        c = text_[pos_] == 'n' ? '\n' : text_[pos_];
      }
      t.text += c;
      Advance();
    }
    if (pos_ >= text_.size()) {
      t.kind = TokKind::kError;
      t.text = "unterminated string";
      return t;
    }
    Advance();  // closing quote
    return t;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  Token current_;
};

}  // namespace tpudoctor
