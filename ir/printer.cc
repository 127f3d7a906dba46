// Relay text printer: post-order binding of every non-atomic node, with an explicit stack of
// function frames so neither long chains nor nested local functions recurse.
#include "ir/printer.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

namespace aotfuzz::ir {
namespace {

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A name the parser reads back as one `%name` token and that can never look like a binding
// number (those are all digits): for names no quoted spelling can carry.
std::string sanitize(const std::string& name) {
  if (name.empty()) return "v";
  std::string out = name;
  for (char& c : out) {
    if (!is_ident_char(c)) c = '_';
  }
  if (out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), 'v');
  return out;
}

}  // namespace

std::string local_spelling(const std::string& name) {
  if (!name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
      std::all_of(name.begin(), name.end(), is_ident_char)) {
    return name;
  }
  if (is_quotable_name(name)) return '"' + name + '"';
  return sanitize(name);
}

bool is_quotable_name(const std::string& name) {
  bool digits_only = true;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') return false;
    digits_only = digits_only && c >= '0' && c <= '9';
  }
  return !name.empty() && !digits_only;
}

namespace {

// Children in the order they are bound: a call's arguments before its callee (as TVM's printer
// lifts them), so a bound local `fn` sits right above its call (ir::num_children counts them).
// Indexed access, so the walk allocates nothing per node.
const Expr& child_at(const ExprNode& node, std::size_t i) {
  switch (node.kind()) {
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      return i < call.args().size() ? call.args()[i] : call.callee();
    }
    case ExprKind::kTuple:
      return static_cast<const TupleNode&>(node).fields()[i];
    default:
      return static_cast<const TupleGetItemNode&>(node).tuple();
  }
}

// Atoms print by name and are never bound.
bool is_atom(const ExprNode& node) {
  return node.kind() == ExprKind::kVar || node.kind() == ExprKind::kGlobalVar;
}

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : opts_(options) {}

  void print_def(const std::string& name, const Function& fn) {
    reset();
    std::vector<std::string> names_here;
    out_ += "def @" + name + "(" + header(*fn, names_here) + ") -> " +
            type_to_string(fn->ret_type()) + " {\n";
    run(fn->body(), 2, std::move(names_here));
    out_ += "}\n";
  }

  void print_local(const Expr& expr) {
    reset();
    if (const auto* fn = as<FunctionNode>(expr)) {
      std::vector<std::string> names_here;
      out_ += "fn (" + header(*fn, names_here) + ") -> " + type_to_string(fn->ret_type()) + " {\n";
      run(fn->body(), 2, std::move(names_here));
      out_ += "}";
      if (opts_.type_comments) out_ += type_comment(*expr);
      out_ += "\n";
    } else {
      run(expr, 0, {});
    }
  }

  std::string take() { return std::move(out_); }

 private:
  // One DFS entry: a node and the index of its next child to visit.
  struct Item {
    const ExprNode* node;
    std::size_t count;
    std::size_t next = 0;
  };
  // One function body being printed.
  struct Frame {
    Expr root;
    int indent = 0;
    std::vector<Item> stack;
    // Scope bookkeeping, undone when the body closes (bindings do not leak out of a `fn`).
    std::vector<const ExprNode*> bound_here;
    std::vector<std::string> names_here;
    const FunctionNode* fn = nullptr;  // the local function whose body this is, if any
    int fn_number = -1;
    bool root_inline = false;
  };

  void reset() {
    out_.clear();
    counter_ = 0;
    num_.clear();
    var_name_.clear();
    visible_.clear();
  }

  std::string type_comment(const ExprNode& node) const {
    return " /* ty=" + type_to_string(node.type()) + " */";
  }

  // Picks the printed name of a parameter: sanitized, and suffixed when the name is already
  // visible (an enclosing function's parameter), because the parser rejects shadowing.
  std::string declare(const VarNode& var, std::vector<std::string>& names_here) {
    std::string name = local_spelling(var.name());
    for (int k = 1; visible_.count(name) != 0; ++k) {
      name = local_spelling(var.name() + "_" + std::to_string(k));
    }
    visible_.insert(name);
    names_here.push_back(name);
    var_name_[&var] = name;
    return name;
  }

  std::string header(const FunctionNode& fn, std::vector<std::string>& names_here) {
    std::string out;
    bool first = true;
    for (const auto& p : fn.params()) {
      if (!first) out += ", ";
      first = false;
      out += '%';
      out += declare(*p, names_here);
      out += ": ";
      out += type_to_string(p->type());
    }
    for (const auto& [key, value] : fn.attrs().entries()) {
      if (!first) out += ", ";
      first = false;
      out += key + "=" + attr_value_to_string(value);
    }
    return out;
  }

  void put_int(long long v) {
    char buf[24];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, ptr);
  }

  // Appends the reference to an atom or an already bound node.
  void put_ref(const ExprNode& node) {
    if (const auto* v = as<VarNode>(&node)) {
      auto it = var_name_.find(v);
      out_ += '%';
      out_ += it != var_name_.end() ? it->second : local_spelling(v->name());
      return;
    }
    if (const auto* g = as<GlobalVarNode>(&node)) {
      out_ += '@';
      out_ += g->name();
      return;
    }
    auto it = num_.find(&node);
    if (it == num_.end()) {
      out_ += "%?";
      return;
    }
    out_ += '%';
    put_int(it->second);
  }

  void put_attrs(const Attrs& attrs, bool first) {
    for (const auto& [key, value] : attrs.entries()) {
      if (!first) out_ += ", ";
      first = false;
      out_ += key;
      out_ += '=';
      out_ += attr_value_to_string(value);
    }
  }

  // Appends the right-hand side of a binding: the node with its children as references.
  void put_text(const ExprNode& node) {
    switch (node.kind()) {
      case ExprKind::kCall: {
        const auto& call = static_cast<const CallNode&>(node);
        if (call.op()) {
          out_ += op_name(*call.op());
        } else {
          put_ref(*call.callee());
        }
        out_ += '(';
        bool first = true;
        for (const auto& a : call.args()) {
          if (!first) out_ += ", ";
          first = false;
          put_ref(*a);
        }
        put_attrs(call.attrs(), first);
        out_ += ')';
        return;
      }
      case ExprKind::kTuple: {
        const auto& fields = static_cast<const TupleNode&>(node).fields();
        out_ += '(';
        for (std::size_t i = 0; i < fields.size(); ++i) {
          if (i) out_ += ", ";
          put_ref(*fields[i]);
        }
        if (fields.size() == 1) out_ += ',';
        out_ += ')';
        return;
      }
      case ExprKind::kConstant: {
        // Relay prints `meta[relay.Constant][k]` and keeps the data aside; the elements are
        // written inline here so that a file holds its whole graph.
        const auto& c = static_cast<const ConstantNode&>(node);
        out_ += "const(";
        out_ += type_to_string(c.type());
        out_ += ", [";
        for (std::size_t i = 0; i < c.values().size(); ++i) {
          if (i) out_ += ", ";
          put_int(c.values()[i]);
        }
        out_ += "])";
        return;
      }
      case ExprKind::kTupleGetItem: {
        const auto& tgi = static_cast<const TupleGetItemNode&>(node);
        put_ref(*tgi.tuple());
        out_ += '.';
        put_int(tgi.index());
        return;
      }
      default:
        put_ref(node);
    }
  }

  bool needs_binding(const Expr& e) const { return !is_atom(*e) && num_.count(e.get()) == 0; }

  void start(Frame& f) {
    if (needs_binding(f.root)) f.stack.push_back({f.root.get(), num_children(*f.root)});
  }

  void indent(int n) { out_.append(static_cast<std::size_t>(n), ' '); }

  void bind(Frame& f, const ExprNode& node) {
    const int n = counter_++;
    indent(f.indent);
    out_ += '%';
    put_int(n);
    out_ += " = ";
    put_text(node);
    if (opts_.type_comments) out_ += type_comment(node);
    out_ += ";\n";
    num_[&node] = n;
    f.bound_here.push_back(&node);
  }

  // Prints one body (and, through the frame stack, every local function inside it).
  void run(const Expr& root, int base_indent, std::vector<std::string> names_here) {
    std::vector<Frame> frames;
    frames.emplace_back();
    frames.back().root = root;
    frames.back().indent = base_indent;
    frames.back().names_here = std::move(names_here);
    start(frames.back());
    while (!frames.empty()) {
      Frame& f = frames.back();
      if (!f.stack.empty()) {
        Item& top = f.stack.back();
        if (top.next < top.count) {
          const Expr& kid = child_at(*top.node, top.next++);
          if (needs_binding(kid)) f.stack.push_back({kid.get(), num_children(*kid)});
          continue;
        }
        const ExprNode* node = top.node;
        f.stack.pop_back();
        if (const auto* fn = as<FunctionNode>(node)) {
          // Bound before its body, so the body's numbers follow the function's own.
          const int n = counter_++;
          Frame inner;
          indent(f.indent);
          out_ += '%';
          out_ += std::to_string(n);
          out_ += " = fn (";
          out_ += header(*fn, inner.names_here);
          out_ += ") -> ";
          out_ += type_to_string(fn->ret_type());
          out_ += " {\n";
          inner.root = fn->body();
          inner.indent = f.indent + 2;
          inner.fn = fn;
          inner.fn_number = n;
          start(inner);
          frames.push_back(std::move(inner));  // invalidates f
          continue;
        }
        if (f.stack.empty() && node == f.root.get()) {
          f.root_inline = true;
        } else {
          bind(f, *node);
          continue;
        }
      }
      // The body is complete: its result, then the scope closes.
      indent(f.indent);
      if (f.root_inline) {
        put_text(*f.root);
      } else {
        put_ref(*f.root);
      }
      if (opts_.type_comments) out_ += type_comment(*f.root);
      out_ += "\n";
      for (const ExprNode* n : f.bound_here) num_.erase(n);
      for (const auto& name : f.names_here) visible_.erase(name);
      const FunctionNode* fn = f.fn;
      const int fn_number = f.fn_number;
      frames.pop_back();
      if (fn != nullptr) {
        Frame& parent = frames.back();
        indent(parent.indent);
        out_ += "}";
        if (opts_.type_comments) out_ += type_comment(*fn);
        out_ += ";\n";
        num_[fn] = fn_number;
        parent.bound_here.push_back(fn);
      }
    }
  }

  const PrintOptions& opts_;
  int counter_ = 0;
  std::unordered_map<const ExprNode*, int> num_;
  std::unordered_map<const VarNode*, std::string> var_name_;
  std::unordered_set<std::string> visible_;
  std::string out_;
};

}  // namespace

std::string attr_value_to_string(const AttrValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  const auto& s = std::get<std::string>(value);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += "\"";
  return out;
}

std::string print_module(const Module& module, const PrintOptions& options) {
  Printer printer(options);
  std::string out = "#[version = \"0.0.5\"]\n";
  bool first = true;
  for (const auto& [name, fn] : module.functions()) {
    if (!first) out += "\n";
    first = false;
    printer.print_def(name, fn);
    out += printer.take();
  }
  return out;
}

std::string print_expr(const Expr& expr, const PrintOptions& options) {
  if (!expr) return "(null)";
  Printer printer(options);
  printer.print_local(expr);
  std::string out = printer.take();
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace aotfuzz::ir
