// Composition of 2D integer affine maps p -> x * p.x + y * p.y + t (columns x, y; wrapping 32-bit
// arithmetic, so exact): combine(a, b) applies a, then b. Associative, not commutative.
ivec2 apply_linear(Affine m, ivec2 p) { return m.x * p.x + m.y * p.y; }
Affine combine(Affine a, Affine b) { return Affine(apply_linear(b, a.x), apply_linear(b, a.y), apply_linear(b, a.t) + b.t); }
