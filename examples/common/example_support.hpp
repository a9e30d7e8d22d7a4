// What the examples share around vkprim: errors as exceptions inside the example (vkprim itself returns
// Status), the standalone Device with validation where the layer is installed, the skip where the device
// lacks a feature, and the exit status (0 only if the checks passed and validation said nothing).
#pragma once

#include <vkprim/vkprim.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace vkprim_example {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T take(vkprim::Result<T> r, const char* what) {
  if (!r) throw Failure(std::string(what) + ": " + vkprim::to_string(r.status()) + ": " + r.error().message);
  return std::move(r).value();
}
inline void check(const vkprim::Result<void>& r, const char* what) {
  if (!r) throw Failure(std::string(what) + ": " + vkprim::to_string(r.status()) + ": " + r.message());
}

// vkprim's standalone Device with validation and synchronization validation, or without where the layer is
// missing; `validation` says which.
inline std::unique_ptr<vkprim::Device> open_device(bool& validation) {
  vkprim::DeviceOptions options;
  options.validation = true;
  vkprim::Result<std::unique_ptr<vkprim::Device>> created = vkprim::Device::create(options);
  if (!created && created.status() == vkprim::Status::unsupported) {  // no validation layer: run without
    options.validation = false;
    created = vkprim::Device::create(options);
  }
  validation = options.validation;
  return take(std::move(created), "vkprim::Device::create");
}

// The exit status: 1 on mismatches or any validation message, else 0.
inline int finish(const char* name, const vkprim::Device& dev, uint64_t mismatches) {
  const uint64_t messages = dev.validation_message_count();
  if (messages) std::fprintf(stderr, "%s: %llu validation message(s): failing\n", name, static_cast<unsigned long long>(messages));
  return mismatches || messages ? 1 : 0;
}

// main(): runs `run` and turns a Failure into exit status 1.
template <class Run>
int run_main(const char* name, Run&& run) {
  try {
    return run();  // everything Vulkan is destroyed when it returns
  } catch (const Failure& f) {
    std::fprintf(stderr, "%s: %s\n", name, f.what());
    return 1;
  }
}

}  // namespace vkprim_example
