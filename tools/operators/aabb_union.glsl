// Union of axis-aligned bounding boxes (a BVH build's node bounds): commutative, exact.
Aabb combine(Aabb a, Aabb b) { return Aabb(min(a.lo, b.lo), max(a.hi, b.hi)); }
