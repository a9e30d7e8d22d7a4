// Linked into every sanitizer test executable (tests/sanitizers/sanitizers.cmake). The Vulkan loader closes
// the validation layer and the driver (dlclose) with the last instance. LeakSanitizer checks at exit, after
// that, and then names no library in the stacks of what they allocated, so lsan.supp, which matches
// library names, would not apply; ThreadSanitizer aborts the process when a library named by a
// called_from_lib suppression (tsan.supp) is unloaded. Opening them once more here, and never closing
// them, keeps them mapped until the process ends. A library that is not installed is simply not opened.
#include <dlfcn.h>

#include <initializer_list>

namespace {

struct KeepLoaded {
  KeepLoaded() {
    for (const char* name : {"libVkLayer_khronos_validation.so", "libvulkan_lvp.so"})
      dlopen(name, RTLD_NOW | RTLD_LOCAL);
  }
} keep_loaded;

}  // namespace
