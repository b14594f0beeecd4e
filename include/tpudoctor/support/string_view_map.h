// StringViewMap<V>: a hash map from string views to values, for the name tables a frontend builds
// while it reads a file (instruction names of an HLO computation, value infos of an ONNX graph).
// The keys are views into text that outlives the map (the file's bytes, a parsed protobuf), so
// nothing is copied, and the slots are one flat array (open addressing, linear probing, at most
// half full): a lookup is one or two cache lines where std::unordered_map chases a node per entry.
// (Abseil's flat_hash_map does the same, but Debian ships it as a dozen shared libraries that
// every start of the tool would have to load.)
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace tpudoctor {

template <typename V>
class StringViewMap {
 public:
  explicit StringViewMap(std::size_t expected = 0) { Rehash(SlotsFor(expected)); }

  // The value under `key`, inserted as `value` when the key is new; `.second` says which.
  std::pair<V*, bool> TryEmplace(std::string_view key, V value = V()) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    const std::uint64_t hash = HashOf(key);
    for (std::size_t i = hash & Mask();; i = (i + 1) & Mask()) {
      Slot& s = slots_[i];
      if (s.hash == 0) {
        s = Slot{hash, key, std::move(value)};
        ++size_;
        return {&s.value, true};
      }
      if (s.hash == hash && s.key == key) return {&s.value, false};
    }
  }
  V& operator[](std::string_view key) { return *TryEmplace(key).first; }

  const V* Find(std::string_view key) const {
    const std::uint64_t hash = HashOf(key);
    for (std::size_t i = hash & Mask();; i = (i + 1) & Mask()) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return nullptr;
      if (s.hash == hash && s.key == key) return &s.value;
    }
  }
  V* Find(std::string_view key) { return const_cast<V*>(std::as_const(*this).Find(key)); }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t hash = 0;  // 0: empty (HashOf never returns it)
    std::string_view key;
    V value{};
  };
  static std::uint64_t HashOf(std::string_view key) {
    return std::hash<std::string_view>{}(key) | (std::uint64_t{1} << 63);
  }
  static std::size_t SlotsFor(std::size_t entries) {
    std::size_t slots = 16;
    while (slots < 2 * entries) slots *= 2;
    return slots;
  }
  std::size_t Mask() const { return slots_.size() - 1; }
  void Rehash(std::size_t slots) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots));
    for (Slot& s : old) {
      if (s.hash == 0) continue;
      std::size_t i = s.hash & Mask();
      while (slots_[i].hash != 0) i = (i + 1) & Mask();
      slots_[i] = std::move(s);
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace tpudoctor
