// The smallest value and, among equal values, the smallest index (argmin as a (value, index) pair). A total
// order's minimum: associative and commutative for values that are not NaN; exact (selects only).
ArgMin combine(ArgMin a, ArgMin b) { return (b.value < a.value || (b.value == a.value && b.index < a.index)) ? b : a; }
