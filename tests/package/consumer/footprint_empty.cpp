// Footprint baseline (tests/package/run_package_test.cmake): the same build of a program without vkprim.
int main() { return 0; }
