// The engine's operator: the union of two axis-aligned boxes. A BVH node's bounds are the union of its
// children's; the identity is the empty box (lo +inf, hi -inf).
Bounds combine(Bounds a, Bounds b) { return Bounds(min(a.lo, b.lo), max(a.hi, b.hi)); }
