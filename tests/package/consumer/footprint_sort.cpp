// Footprint probe (tests/package/run_package_test.cmake): an engine that creates one vkprim plan, a u32
// pairs radix sort, and nothing else. It is built and measured, never run with arguments: the plan code
// sits behind argc so that the linker must keep it.
#include <vkprim/context.hpp>
#include <vkprim/sort.hpp>

int main(int argc, char**) {
  if (argc < 2) return 0;
  vkprim::ContextCreateInfo info{};
  auto context = vkprim::Context::create(info);
  if (!context) return 1;
  vkprim::SortDesc desc;
  desc.key_type = vkprim::DataType::u32;
  desc.value_size = 4;
  desc.max_count = 1u << 20;
  auto sort = vkprim::RadixSort::create(*context.value(), desc);
  return sort ? 0 : 1;
}
