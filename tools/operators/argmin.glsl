// The smallest value and, among equal values, the smallest index (argmin as a (value, index) pair). A total
// order's minimum: associative and commutative for values that are not NaN; exact (selects only).
// any()/all() instead of || and &&, which glslang compiles to branches; ?: between variables is a select.
ArgMin combine(ArgMin a, ArgMin b) {
  const bool take_b = any(bvec2(b.value < a.value, all(bvec2(b.value == a.value, b.index < a.index))));
  return take_b ? b : a;
}
