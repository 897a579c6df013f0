// c10/core/Device.h for the CuSeT CPU emulator's torch shim (see torch/extension.h).
// One emulated CUDA device, cuda:0; CPU tensors exist too (a kernel given one faults).
#ifndef CUSET_C10_DEVICE_H
#define CUSET_C10_DEVICE_H

#include <c10/util/Exception.h>

#include <cstdint>
#include <ostream>
#include <string>

namespace c10 {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
using DeviceIndex = int8_t;

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}
  Device(const std::string& text) {  // "cuda", "cuda:0", "cpu"
    std::string kind = text.substr(0, text.find(':'));
    TORCH_CHECK(kind == "cuda" || kind == "cpu", "Expected one of cpu, cuda device type at start of device string: ", text);
    type_ = kind == "cuda" ? kCUDA : kCPU;
    index_ = text.find(':') == std::string::npos ? -1 : (DeviceIndex)std::stoi(text.substr(text.find(':') + 1));
  }
  Device(const char* text) : Device(std::string(text)) {}
  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cuda() const { return type_ == kCUDA; }
  bool is_cpu() const { return type_ == kCPU; }
  std::string str() const { return std::string(is_cuda() ? "cuda" : "cpu") + (has_index() ? ":" + std::to_string(index_) : ""); }
  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && (a.index_ == b.index_ || a.index_ < 0 || b.index_ < 0);
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

 private:
  DeviceType type_;
  DeviceIndex index_;
};

inline std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << (t == kCUDA ? "cuda" : "cpu"); }

}  // namespace c10

#endif  // CUSET_C10_DEVICE_H
