// Relay text parser. A pre-scan finds every `def` and the globals it names, so functions can
// refer to each other in any order; each def is then parsed callees-first by recursive descent
// bounded by kMaxParseDepth (bindings and postfix chains are loops, so long chains are flat).
#include "ir/parser.h"

#include <charconv>
#include <climits>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/error.h"
#include "ir/show_text.h"

namespace aotfuzz::ir {

std::string show_text(std::string_view text, std::size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

namespace {

// Attribute lists are copied on every Attrs::with, so their length is bounded to keep
// adversarial input linear.
constexpr std::size_t kMaxAttrs = 64;

enum class Tok : std::uint8_t {
  kEof,
  kLocal,   // %name
  kGlobal,  // @name
  kIdent,   // identifiers, keywords and dotted op names
  kInt,     // -?[0-9]+
  kString,  // "..."
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kSemi,
  kColon,
  kEq,
  kArrow,
  kDot,
  kHash,
};

struct Pos {
  std::size_t offset = 0;
  int line = 1;
  int col = 1;
};

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;  // the spelling, sigils included
  Pos pos;
  std::string str;  // decoded value of a string literal

  // The name of a %local or @global, without its sigil (and without the quotes of %"...").
  std::string_view name() const {
    if (text.size() >= 3 && text[1] == '"') return text.substr(2, text.size() - 3);
    return text.substr(1);
  }
};

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_alpha(c) || is_digit(c); }

std::string show(std::string_view text) { return show_text(text); }

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kString:
      return "string \"" + show(t.str) + "\"";
    default:
      return "'" + show(t.text) + "'";
  }
}

class Lexer {
 public:
  Lexer(std::string_view src, const std::string* file, Pos start = {})
      : src_(src), file_(file), pos_(start) {}

  Token next() {
    skip_space();
    Token t;
    t.pos = pos_;
    if (pos_.offset >= src_.size()) return t;
    const std::size_t start = pos_.offset;
    const char c = src_[start];
    if (c == '%' && at(1) == '"') {
      lex_quoted_local(t);
    } else if (c == '%' || c == '@') {
      advance(1);
      std::size_t n = 0;
      while (is_ident_char(at(n))) ++n;
      if (n == 0) {
        fail(t.pos,
             std::string("expected a name after '") + c + "', found " +
                 (at_end(0) ? "end of input" : "'" + show(src_.substr(pos_.offset, 1)) + "'"));
      }
      advance(n);
      t.kind = c == '%' ? Tok::kLocal : Tok::kGlobal;
    } else if (is_alpha(c)) {
      std::size_t n = 1;
      while (is_ident_char(at(n))) ++n;
      // Dotted op names (`annotation.compiler_begin`); `.0` after a name is a tuple index.
      while (at(n) == '.' && is_alpha(at(n + 1))) {
        n += 2;
        while (is_ident_char(at(n))) ++n;
      }
      advance(n);
      t.kind = Tok::kIdent;
    } else if (is_digit(c) || (c == '-' && is_digit(at(1)))) {
      std::size_t n = 1;
      while (is_digit(at(n))) ++n;
      advance(n);
      t.kind = Tok::kInt;
    } else if (c == '-' && at(1) == '>') {
      advance(2);
      t.kind = Tok::kArrow;
    } else if (c == '"') {
      lex_string(t);
    } else {
      switch (c) {
        case '(':
          t.kind = Tok::kLParen;
          break;
        case ')':
          t.kind = Tok::kRParen;
          break;
        case '[':
          t.kind = Tok::kLBracket;
          break;
        case ']':
          t.kind = Tok::kRBracket;
          break;
        case '{':
          t.kind = Tok::kLBrace;
          break;
        case '}':
          t.kind = Tok::kRBrace;
          break;
        case ',':
          t.kind = Tok::kComma;
          break;
        case ';':
          t.kind = Tok::kSemi;
          break;
        case ':':
          t.kind = Tok::kColon;
          break;
        case '=':
          t.kind = Tok::kEq;
          break;
        case '.':
          t.kind = Tok::kDot;
          break;
        case '#':
          t.kind = Tok::kHash;
          break;
        default:
          fail(t.pos, "unexpected character '" + show(src_.substr(start, 1)) + "'");
      }
      advance(1);
    }
    t.text = src_.substr(start, pos_.offset - start);
    return t;
  }

  [[noreturn]] void fail(const Pos& pos, const std::string& message) const {
    throw ParseError(*file_, pos.line, pos.col, message);
  }

 private:
  bool at_end(std::size_t k) const { return pos_.offset + k >= src_.size(); }
  char at(std::size_t k) const { return at_end(k) ? '\0' : src_[pos_.offset + k]; }

  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && pos_.offset < src_.size(); ++i) {
      if (src_[pos_.offset++] == '\n') {
        ++pos_.line;
        pos_.col = 1;
      } else {
        ++pos_.col;
      }
    }
  }

  void skip_space() {
    while (!at_end(0)) {
      const char c = at(0);
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance(1);
      } else if (c == '/' && at(1) == '/') {
        while (!at_end(0) && at(0) != '\n') advance(1);
      } else if (c == '/' && at(1) == '*') {
        // Block comments nest, as in TVM's parser.
        const Pos start = pos_;
        advance(2);
        int depth = 1;
        while (depth > 0) {
          if (at_end(0)) fail(start, "unterminated comment: expected '*/' before end of input");
          if (at(0) == '/' && at(1) == '*') {
            ++depth;
            advance(2);
          } else if (at(0) == '*' && at(1) == '/') {
            --depth;
            advance(2);
          } else {
            advance(1);
          }
        }
      } else {
        return;
      }
    }
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // %"name": a local whose name is not an identifier (TVM's input names such as "input:0").
  // No escapes: a name holds printable ASCII other than '"' and '\\', so its spelling is itself.
  void lex_quoted_local(Token& t) {
    advance(2);
    std::size_t n = 0;
    while (true) {
      if (at_end(n)) fail(t.pos, "unterminated quoted name: expected '\"' before end of input");
      const auto c = static_cast<unsigned char>(at(n));
      if (c == '"') break;
      if (c < 0x20 || c >= 0x7f || c == '\\') {
        advance(n);
        fail(pos_, "a quoted name holds printable ASCII other than '\"' and '\\', not '" +
                       show(src_.substr(pos_.offset, 1)) + "'");
      }
      ++n;
    }
    if (n == 0) fail(t.pos, "empty quoted name '%\"\"'");
    advance(n + 1);
    t.kind = Tok::kLocal;
  }

  void lex_string(Token& t) {
    advance(1);
    while (true) {
      if (at_end(0)) fail(t.pos, "unterminated string: expected '\"' before end of input");
      const char c = at(0);
      if (c == '"') {
        advance(1);
        break;
      }
      if (c != '\\') {
        t.str += c;
        advance(1);
        continue;
      }
      const Pos esc = pos_;
      const char e = at(1);
      switch (e) {
        case '"':
          t.str += '"';
          break;
        case '\\':
          t.str += '\\';
          break;
        case 'n':
          t.str += '\n';
          break;
        case 't':
          t.str += '\t';
          break;
        case 'r':
          t.str += '\r';
          break;
        case 'x': {
          const int hi = hex_value(at(2));
          const int lo = hex_value(at(3));
          if (hi < 0 || lo < 0) fail(esc, "expected two hex digits after '\\x' in a string");
          t.str += static_cast<char>(hi * 16 + lo);
          advance(4);
          continue;
        }
        default:
          fail(esc, "unknown escape '\\" +
                        (at_end(1) ? std::string() : show(src_.substr(pos_.offset + 1, 1))) +
                        "' in a string (expected \\\", \\\\, \\n, \\t, \\r or \\xHH)");
      }
      advance(2);
    }
    t.kind = Tok::kString;
  }

  std::string_view src_;
  const std::string* file_;
  Pos pos_;
};

// Heterogeneous lookup so names can be found by string_view without allocating.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using NameMap = std::unordered_map<std::string, V, NameHash, std::equal_to<>>;

// What the pre-scan learns about one `def`.
struct DefInfo {
  std::string name;
  Pos start;                      // the `def` keyword
  std::vector<std::string> refs;  // globals named in its text, in order of first mention
  std::size_t names = 0;          // %names in its text: bounds its bindings, to size tables
};

class Parser {
 public:
  Parser(std::string_view src, const std::string& file)
      : src_(src), file_(file), lex_(src, &file_) {}

  Module parse() {
    std::vector<DefInfo> defs = prescan();
    NameMap<std::size_t> index;
    for (std::size_t i = 0; i < defs.size(); ++i) {
      auto [it, fresh] = index.emplace(defs[i].name, i);
      if (!fresh) {
        const Pos& first = defs[it->second].start;
        fail(defs[i].start, "redefinition of @" + show(defs[i].name) + " (first defined at " +
                                std::to_string(first.line) + ":" + std::to_string(first.col) + ")");
      }
    }
    std::vector<Function> built(defs.size());
    for (std::size_t i : build_order(defs, index)) {
      lex_ = Lexer(src_, &file_, defs[i].start);
      ahead_.clear();
      // Each binding is named at least twice (bound, then used), so this avoids rehashing.
      locals_.reserve(defs[i].names / 2 + 1);
      Function fn = parse_def();
      globals_.emplace(defs[i].name, GlobalVarNode::make(defs[i].name, fn->type()));
      built[i] = std::move(fn);
    }
    Module module;
    for (std::size_t i = 0; i < defs.size(); ++i) module.add(defs[i].name, std::move(built[i]));
    return module;
  }

 private:
  // ---- tokens ----

  const Token& peek(std::size_t k = 0) {
    while (ahead_.size() <= k) ahead_.push_back(lex_.next());
    return ahead_[k];
  }

  Token take() {
    peek();
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    return t;
  }

  bool accept(Tok kind) {
    if (peek().kind != kind) return false;
    take();
    return true;
  }

  Token expect(Tok kind, const std::string& what) {
    if (peek().kind != kind)
      fail(peek().pos, "expected " + what + ", found " + describe_token(peek()));
    return take();
  }

  static bool is_word(const Token& t, std::string_view word) {
    return t.kind == Tok::kIdent && t.text == word;
  }

  [[noreturn]] void fail(const Pos& pos, const std::string& message) const {
    throw ParseError(file_, pos.line, pos.col, message);
  }

  // Node construction type-checks; its errors become parse errors at the construct.
  template <class F>
  auto build(const Pos& at, const std::string& what, F&& make) -> decltype(make()) {
    try {
      return make();
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      fail(at, "invalid " + what + ": " + e.what());
    }
  }

  // Bounds the recursion of the descent; every recursive production holds one.
  class DepthGuard {
   public:
    DepthGuard(Parser& p, const Pos& at) : p_(p) {
      if (p_.depth_ >= kMaxParseDepth) {
        p_.fail(at, "nesting deeper than " + std::to_string(kMaxParseDepth) +
                        " levels (bind sub-expressions with '%n = ...;' instead)");
      }
      ++p_.depth_;
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  std::int64_t int_value(const Token& t, std::int64_t lo, std::int64_t hi,
                         const std::string& what) {
    std::int64_t v = 0;
    const char* first = t.text.data();
    const char* last = first + t.text.size();
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last || v < lo || v > hi) {
      fail(t.pos, what + " " + show(t.text) + " is out of range (expected " + std::to_string(lo) +
                      ".." + std::to_string(hi) + ")");
    }
    return v;
  }

  // ---- module structure ----

  void parse_version_header() {
    expect(Tok::kHash, "'#'");
    expect(Tok::kLBracket, "'[' after '#'");
    const Token key = expect(Tok::kIdent, "'version'");
    if (key.text != "version") fail(key.pos, "expected 'version', found " + describe_token(key));
    expect(Tok::kEq, "'=' after 'version'");
    expect(Tok::kString, "a version string such as \"0.0.5\"");
    expect(Tok::kRBracket, "']' to close the version header");
  }

  // Finds each def's start and the globals its text names, matching braces token by token. The
  // real parse of each def reports any syntax error this lenient scan lets through.
  std::vector<DefInfo> prescan() {
    std::vector<DefInfo> defs;
    if (peek().kind == Tok::kHash) parse_version_header();
    while (peek().kind != Tok::kEof) {
      const Token d = take();
      if (!is_word(d, "def"))
        fail(d.pos, "expected 'def' or end of input, found " + describe_token(d));
      const Token g = expect(Tok::kGlobal, "a function name '@name' after 'def'");
      DefInfo info{std::string(g.name()), d.pos, {}};
      std::unordered_set<std::string_view> seen;
      auto note = [&](const Token& t) {
        if (t.kind == Tok::kGlobal && seen.insert(t.name()).second) {
          info.refs.emplace_back(t.name());
        }
        if (t.kind == Tok::kLocal) ++info.names;
      };
      // `def @name` cannot occur inside a def, so it ends an unclosed one: the real parse then
      // reports the missing '}' there instead of the swallowed defs looking recursive.
      auto next_def = [&] { return is_word(peek(), "def") && peek(1).kind == Tok::kGlobal; };
      while (peek().kind != Tok::kLBrace && peek().kind != Tok::kEof && !next_def()) {
        note(take());
      }
      int depth = 0;
      while (peek().kind != Tok::kEof && !next_def()) {
        const Token t = take();
        note(t);
        if (t.kind == Tok::kLBrace) ++depth;
        if (t.kind == Tok::kRBrace && --depth == 0) break;
      }
      defs.push_back(std::move(info));
    }
    return defs;
  }

  // Callees before callers (iterative DFS); a cycle is an error at the def that closes it.
  std::vector<std::size_t> build_order(const std::vector<DefInfo>& defs,
                                       const NameMap<std::size_t>& index) {
    std::vector<std::vector<std::size_t>> edges(defs.size());
    for (std::size_t i = 0; i < defs.size(); ++i) {
      for (const auto& r : defs[i].refs) {
        auto it = index.find(r);
        if (it != index.end()) edges[i].push_back(it->second);
      }
    }
    std::vector<int> colour(defs.size(), 0);
    std::vector<std::size_t> order;
    for (std::size_t root = 0; root < defs.size(); ++root) {
      if (colour[root] != 0) continue;
      std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
      colour[root] = 1;
      while (!stack.empty()) {
        auto& [cur, next] = stack.back();
        if (next < edges[cur].size()) {
          const std::size_t callee = edges[cur][next++];
          if (colour[callee] == 1) {
            std::string cycle;
            bool on = false;
            for (const auto& frame : stack) {
              on = on || frame.first == callee;
              if (on) {
                cycle += '@';
                cycle += show(defs[frame.first].name);
                cycle += " -> ";
              }
            }
            cycle += '@';
            cycle += show(defs[callee].name);
            fail(defs[callee].start,
                 "recursive call cycle " + cycle + " (recursion is not supported)");
          }
          if (colour[callee] == 0) {
            colour[callee] = 1;
            stack.emplace_back(callee, 0);
          }
          continue;
        }
        colour[cur] = 2;
        order.push_back(cur);
        stack.pop_back();
      }
    }
    return order;
  }

  // ---- scopes ----

  struct Local {
    Expr expr;
    Pos pos;
  };

  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    if (scopes_.size() == 1) {
      locals_.clear();  // the end of a def: everything goes
    } else {
      for (const auto& name : scopes_.back()) locals_.erase(name);
    }
    scopes_.pop_back();
  }

  void declare(const Token& name_tok, Expr expr) {
    auto [it, fresh] = locals_.try_emplace(name_tok.name(), Local{std::move(expr), name_tok.pos});
    if (!fresh) {
      fail(name_tok.pos, "redefinition of %" + show(name_tok.name()) + " (already defined at " +
                             std::to_string(it->second.pos.line) + ":" +
                             std::to_string(it->second.pos.col) + "; shadowing is not allowed)");
    }
    scopes_.back().push_back(it->first);
  }

  // ---- functions ----

  Function parse_def() {
    take();  // `def`, checked by the pre-scan
    const Token g = expect(Tok::kGlobal, "a function name '@name' after 'def'");
    push_scope();
    expect(Tok::kLParen, "'(' to open the parameters of @" + show(g.name()));
    std::vector<Var> params;
    Attrs attrs;
    parse_params(params, attrs);
    Pos ret_pos = g.pos;
    Type ret;
    if (peek().kind == Tok::kArrow) {
      take();
      ret_pos = peek().pos;
      ret = parse_type();
    }
    expect(Tok::kLBrace, "'{' to open the body of @" + show(g.name()));
    Expr body = parse_body();
    expect(Tok::kRBrace, "'}' to close the body of @" + show(g.name()));
    pop_scope();
    return build(ret_pos, "function @" + show(g.name()), [&] {
      return FunctionNode::make(std::move(params), std::move(body), std::move(attrs),
                                std::move(ret));
    });
  }

  Expr parse_fn() {
    const Token f = take();  // `fn`
    push_scope();
    expect(Tok::kLParen, "'(' after 'fn'");
    std::vector<Var> params;
    Attrs attrs;
    parse_params(params, attrs);
    Pos ret_pos = f.pos;
    Type ret;
    if (peek().kind == Tok::kArrow) {
      take();
      ret_pos = peek().pos;
      ret = parse_type();
    }
    expect(Tok::kLBrace, "'{' to open the body of the fn");
    Expr body = parse_body();
    expect(Tok::kRBrace, "'}' to close the body of the fn");
    pop_scope();
    return build(ret_pos, "fn", [&] {
      return FunctionNode::make(std::move(params), std::move(body), std::move(attrs),
                                std::move(ret));
    });
  }

  // After '(': `%x: T, ..., key=value, ...)`. Parameters are declared in the current scope.
  void parse_params(std::vector<Var>& params, Attrs& attrs) {
    if (accept(Tok::kRParen)) return;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::kLocal) {
        const Token name = take();
        if (!attrs.empty()) fail(name.pos, "parameters must come before attributes");
        expect(Tok::kColon,
               "':' and a type after parameter %" + show(name.name()) + " (parameters need types)");
        Type type = parse_type();
        Var v = build(name.pos, "parameter %" + show(name.name()),
                      [&] { return VarNode::make(std::string(name.name()), std::move(type)); });
        declare(name, v);
        params.push_back(std::move(v));
      } else if (t.kind == Tok::kIdent && peek(1).kind == Tok::kEq) {
        parse_attr(attrs);
      } else {
        fail(t.pos, "expected a parameter '%name: Type' or an attribute 'key=value', found " +
                        describe_token(t));
      }
      if (accept(Tok::kComma)) continue;
      expect(Tok::kRParen, "',' or ')' in the parameter list");
      return;
    }
  }

  void parse_attr(Attrs& attrs) {
    const Token key = take();
    take();  // '='
    if (attrs.has(key.text)) fail(key.pos, "duplicate attribute '" + show(key.text) + "'");
    if (attrs.entries().size() >= kMaxAttrs) {
      fail(key.pos, "more than " + std::to_string(kMaxAttrs) + " attributes");
    }
    const Token& v = peek();
    if (v.kind == Tok::kInt) {
      const Token num = take();
      attrs = attrs.with(std::string(key.text), int_value(num, INT64_MIN, INT64_MAX, "integer"));
    } else if (v.kind == Tok::kString) {
      attrs = attrs.with(std::string(key.text), take().str);
    } else {
      fail(v.pos, "expected an integer or a string as the value of attribute '" + show(key.text) +
                      "', found " + describe_token(v));
    }
  }

  // `%a = e; ... result`. The caller expects the closing '}'.
  Expr parse_body() {
    while (true) {
      if (peek().kind == Tok::kLocal && peek(1).kind == Tok::kEq) {
        const Token name = take();
        take();  // '='
        Expr value = parse_expr();
        expect(Tok::kSemi, "';' after the binding of %" + show(name.name()));
        declare(name, std::move(value));
        continue;
      }
      if (peek().kind == Tok::kRBrace) {
        fail(peek().pos, "expected an expression (the result of the function), found '}'");
      }
      return parse_expr();
    }
  }

  // ---- types ----

  // Structurally equal types are shared, so the type checks of calls stop at pointer equality
  // instead of re-walking big tuple types once per call (which adversarial text could make
  // quadratic). Inner types are interned first, so each comparison here is one level deep.
  Type intern(Type type) {
    auto& bucket = interned_[type->hash()];
    for (const auto& known : bucket) {
      if (type_equal(known, type)) return known;
    }
    bucket.push_back(type);
    return type;
  }

  Type parse_type() { return intern(parse_type_uninterned()); }

  Type parse_type_uninterned() {
    const Token& t = peek();
    const Pos start = t.pos;
    DepthGuard guard(*this, start);
    if (t.kind == Tok::kLParen) {
      const Token open = take();
      std::vector<Type> fields;
      bool comma = false;
      while (!accept(Tok::kRParen)) {
        fields.push_back(parse_type());
        if (accept(Tok::kComma)) {
          comma = true;
          continue;
        }
        expect(Tok::kRParen, "',' or ')' in a tuple type");
        break;
      }
      if (fields.size() == 1 && !comma) return fields[0];  // `(T)` is T
      return build(open.pos, "tuple type", [&] { return TypeNode::tuple(std::move(fields)); });
    }
    if (t.kind == Tok::kIdent && t.text == "Tensor") {
      take();
      expect(Tok::kLBracket, "'[' after 'Tensor'");
      expect(Tok::kLParen, "'(' to open the shape");
      std::vector<std::int64_t> shape;
      std::int64_t elements = 1;
      while (!accept(Tok::kRParen)) {
        const Token dim = expect(Tok::kInt, "a dimension (a non-negative integer) or ')'");
        const std::int64_t d = int_value(dim, 0, kMaxParseElements, "dimension");
        if (static_cast<int>(shape.size()) >= kMaxParseRank) {
          fail(dim.pos, "tensor rank above " + std::to_string(kMaxParseRank));
        }
        elements *= d;  // both factors are at most 2^31: no overflow
        if (elements > kMaxParseElements) {
          fail(dim.pos, "tensor type with more than 2^31 elements");
        }
        shape.push_back(d);
        if (accept(Tok::kComma)) continue;
        expect(Tok::kRParen, "',' or ')' in the shape");
        break;
      }
      expect(Tok::kComma, "',' and a dtype after the shape");
      const Token dt = expect(Tok::kIdent, "a dtype (float32, int32 or int8)");
      auto dtype = parse_dtype(dt.text);
      if (!dtype)
        fail(dt.pos, "unknown dtype '" + show(dt.text) + "' (expected float32, int32 or int8)");
      expect(Tok::kRBracket, "']' to close the tensor type");
      return build(start, "tensor type",
                   [&] { return TypeNode::tensor(std::move(shape), *dtype); });
    }
    if (t.kind == Tok::kIdent) {
      auto dtype = parse_dtype(t.text);
      if (!dtype) {
        fail(t.pos, "unknown type or dtype '" + show(t.text) +
                        "' (expected Tensor[(...), dtype], float32, int32, int8 or a tuple type)");
      }
      take();
      return TypeNode::tensor({}, *dtype);
    }
    fail(t.pos, "expected a type (Tensor[(...), dtype], a dtype or a tuple type), found " +
                    describe_token(t));
  }

  // ---- expressions ----

  Expr parse_expr() {
    const Pos start = peek().pos;
    DepthGuard guard(*this, start);
    Expr e = parse_primary();
    while (true) {
      if (peek().kind == Tok::kLParen) {
        take();
        std::vector<Expr> args;
        Attrs none;
        parse_args(args, none, /*allow_attrs=*/false);
        e = build(start, "call of " + describe(*e),
                  [&] { return CallNode::make(std::move(e), std::move(args)); });
      } else if (peek().kind == Tok::kDot) {
        const Token dot = take();
        const Token idx = expect(Tok::kInt, "a tuple index after '.'");
        const int i = static_cast<int>(int_value(idx, 0, INT_MAX, "tuple index"));
        e = build(dot.pos, "tuple index ." + std::to_string(i),
                  [&] { return TupleGetItemNode::make(std::move(e), i); });
      } else {
        return e;
      }
    }
  }

  // `const(Tensor[(2), float32], [1, -2])`: the printer's inline form of a Constant.
  Expr parse_const() {
    const Token name = take();
    take();  // '('
    const Type type = parse_type();
    expect(Tok::kComma, "',' and the values after the constant's type");
    expect(Tok::kLBracket, "'[' to open the constant's values");
    std::vector<std::int64_t> values;
    while (!accept(Tok::kRBracket)) {
      // The text form holds what the generator makes: whole numbers, exact in every dtype.
      const Token v = expect(Tok::kInt,
                             "a whole number or ']' (constant values are whole "
                             "numbers, for float dtypes too)");
      values.push_back(int_value(v, INT64_MIN, INT64_MAX, "constant value"));
      if (accept(Tok::kComma)) continue;
      expect(Tok::kRBracket,
             "',' or ']' in the constant's values (whole numbers, for float "
             "dtypes too)");
      break;
    }
    expect(Tok::kRParen, "')' to close the constant");
    return build(name.pos, "constant", [&] { return ConstantNode::make(type, std::move(values)); });
  }

  // After '(': arguments, then (for ops) attributes, then ')'.
  void parse_args(std::vector<Expr>& args, Attrs& attrs, bool allow_attrs) {
    if (accept(Tok::kRParen)) return;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::kIdent && peek(1).kind == Tok::kEq) {
        if (!allow_attrs) fail(t.pos, "only operator calls take attributes");
        parse_attr(attrs);
      } else {
        if (!attrs.empty()) fail(t.pos, "arguments must come before attributes");
        args.push_back(parse_expr());
      }
      if (accept(Tok::kComma)) continue;
      expect(Tok::kRParen, "',' or ')' in the argument list");
      return;
    }
  }

  Expr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kLocal: {
        auto it = locals_.find(t.name());
        if (it == locals_.end()) fail(t.pos, "undefined variable %" + show(t.name()));
        take();
        return it->second.expr;
      }
      case Tok::kGlobal: {
        auto it = globals_.find(t.name());
        if (it == globals_.end()) fail(t.pos, "undefined function @" + show(t.name()));
        take();
        return it->second;
      }
      case Tok::kIdent: {
        if (t.text == "fn") return parse_fn();
        if (t.text == "const" && peek(1).kind == Tok::kLParen) return parse_const();
        const auto op = parse_op(t.text);
        if (peek(1).kind != Tok::kLParen) {
          fail(t.pos, "expected an expression, found " + describe_token(t) +
                          (op ? " (an operator must be called: '" + show(t.text) + "(...)')" : ""));
        }
        if (!op) fail(t.pos, "unknown operator '" + show(t.text) + "'");
        const Token name = take();
        take();  // '('
        std::vector<Expr> args;
        Attrs attrs;
        parse_args(args, attrs, /*allow_attrs=*/true);
        return build(name.pos, "call of " + std::string(op_name(*op)),
                     [&] { return CallNode::make(*op, std::move(args), std::move(attrs)); });
      }
      case Tok::kLParen: {
        const Token open = take();
        if (accept(Tok::kRParen)) return TupleNode::make({});
        Expr first = parse_expr();
        if (accept(Tok::kRParen)) return first;  // `(e)` is e
        expect(Tok::kComma, "',' or ')' after a parenthesised expression");
        std::vector<Expr> fields{std::move(first)};
        while (!accept(Tok::kRParen)) {
          fields.push_back(parse_expr());
          if (accept(Tok::kComma)) continue;
          expect(Tok::kRParen, "',' or ')' in a tuple");
          break;
        }
        return build(open.pos, "tuple", [&] { return TupleNode::make(std::move(fields)); });
      }
      default:
        fail(t.pos, "expected an expression, found " + describe_token(t));
    }
  }

  std::string_view src_;
  std::string file_;
  Lexer lex_;
  std::deque<Token> ahead_;
  int depth_ = 0;
  // Keys view the source text, which outlives the parse.
  std::unordered_map<std::string_view, Local> locals_;
  std::vector<std::vector<std::string_view>> scopes_;
  NameMap<GlobalVar> globals_;
  std::unordered_map<std::size_t, std::vector<Type>> interned_;
};

}  // namespace

Module parse_module(std::string_view text, const std::string& filename) {
  // A UTF-8 byte order mark (editors on some systems write one) is no character of the text.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  Parser parser(text, filename);
  return parser.parse();
}

}  // namespace aotfuzz::ir
