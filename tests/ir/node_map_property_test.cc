// Property: NodeMap (open addressing, linear probing, backward-shift erase) holds exactly what
// std::unordered_map holds after any sequence of inserts, assignments, erases, clears, reserves
// and copies. Keys come from a small pool of live nodes so that sequences hit the same keys
// again, collide, and wrap around the end of the slot array.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "ir/node_map.h"
#include "ir/type.h"

namespace aotfuzz::ir {
namespace {

enum class OpKind { kTryEmplace, kAssign, kFind, kErase, kClear, kReserve, kCopy, kMove };

struct MapOp {
  OpKind kind;
  int key;    // index into the key pool
  int value;  // the value, or the reserve size
};

void showValue(const MapOp& op, std::ostream& os) {
  os << "{op " << static_cast<int>(op.kind) << ", key " << op.key << ", value " << op.value << "}";
}

const std::vector<Var>& key_pool() {
  static const std::vector<Var> pool = [] {
    std::vector<Var> keys;
    for (int i = 0; i < 48; ++i) {
      keys.push_back(
          VarNode::make("k" + std::to_string(i), TypeNode::tensor({1}, DType::kFloat32)));
    }
    return keys;
  }();
  return pool;
}

rc::Gen<MapOp> gen_op() {
  const int num_keys = static_cast<int>(key_pool().size());
  return rc::gen::build<MapOp>(
      rc::gen::set(&MapOp::kind, rc::gen::weightedElement<OpKind>({{30, OpKind::kTryEmplace},
                                                                   {15, OpKind::kAssign},
                                                                   {15, OpKind::kFind},
                                                                   {25, OpKind::kErase},
                                                                   {2, OpKind::kClear},
                                                                   {5, OpKind::kReserve},
                                                                   {2, OpKind::kCopy},
                                                                   {2, OpKind::kMove}})),
      rc::gen::set(&MapOp::key, rc::gen::inRange(0, num_keys)),
      rc::gen::set(&MapOp::value, rc::gen::inRange(0, 100)));
}

// Every key of the pool: present in both with the same value, or absent from both.
void expect_same(const NodeMap<int>& map, const std::unordered_map<const ExprNode*, int>& model) {
  RC_ASSERT(map.size() == model.size());
  RC_ASSERT(map.empty() == model.empty());
  for (const auto& key : key_pool()) {
    const int* got = map.find(key.get());
    const auto it = model.find(key.get());
    RC_ASSERT((got != nullptr) == (it != model.end()));
    RC_ASSERT(map.contains(key.get()) == (it != model.end()));
    if (got != nullptr) RC_ASSERT(*got == it->second);
  }
}

RC_GTEST_PROP(NodeMapProperty, HoldsWhatAnUnorderedMapHoldsAfterAnySequenceOfOperations, ()) {
  const auto ops = *rc::gen::container<std::vector<MapOp>>(gen_op());
  NodeMap<int> map;
  std::unordered_map<const ExprNode*, int> model;
  for (const MapOp& op : ops) {
    const ExprNode* key = key_pool()[static_cast<std::size_t>(op.key)].get();
    switch (op.kind) {
      case OpKind::kTryEmplace: {
        const auto [entry, inserted] = map.try_emplace(key, op.value);
        const auto [it, model_inserted] = model.try_emplace(key, op.value);
        RC_ASSERT(inserted == model_inserted);
        RC_ASSERT(*entry == it->second);
        break;
      }
      case OpKind::kAssign:
        map[key] = op.value;
        model[key] = op.value;
        break;
      case OpKind::kFind: {
        const int* got = map.find(key);
        RC_ASSERT((got != nullptr) == model.contains(key));
        if (got != nullptr) RC_ASSERT(*got == model.at(key));
        break;
      }
      case OpKind::kErase:
        RC_ASSERT(map.erase(key) == (model.erase(key) == 1));
        break;
      case OpKind::kClear:
        map.clear();
        model.clear();
        break;
      case OpKind::kReserve:
        map.reserve(static_cast<std::size_t>(op.value));
        break;
      case OpKind::kCopy: {
        const NodeMap<int> copy(map);
        expect_same(copy, model);
        map = copy;
        break;
      }
      case OpKind::kMove: {
        NodeMap<int> moved(std::move(map));
        expect_same(moved, model);
        map = std::move(moved);
        break;
      }
    }
    expect_same(map, model);
  }
}

// Values that own memory: erase's backward shift moves them, clear destroys them.
RC_GTEST_PROP(NodeMapProperty, KeepsOwningValuesThroughErasesAndClears, ()) {
  const auto ops = *rc::gen::container<std::vector<MapOp>>(gen_op());
  NodeMap<std::vector<int>> map;
  std::unordered_map<const ExprNode*, std::vector<int>> model;
  for (const MapOp& op : ops) {
    const ExprNode* key = key_pool()[static_cast<std::size_t>(op.key)].get();
    switch (op.kind) {
      case OpKind::kTryEmplace:
      case OpKind::kAssign:
        map[key].push_back(op.value);
        model[key].push_back(op.value);
        break;
      case OpKind::kErase:
        RC_ASSERT(map.erase(key) == (model.erase(key) == 1));
        break;
      case OpKind::kClear:
        map.clear();
        model.clear();
        break;
      default:
        map.reserve(static_cast<std::size_t>(op.value));
        break;
    }
    RC_ASSERT(map.size() == model.size());
    for (const auto& k : key_pool()) {
      const std::vector<int>* got = map.find(k.get());
      const auto it = model.find(k.get());
      RC_ASSERT((got != nullptr) == (it != model.end()));
      if (got != nullptr) RC_ASSERT(*got == it->second);
    }
  }
}

}  // namespace
}  // namespace aotfuzz::ir
