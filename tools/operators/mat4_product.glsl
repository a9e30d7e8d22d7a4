// 4x4 matrix product over wrapping u32 (64 bytes, the largest user type): combine(a, b) = a * b, columns c.
// Associative, not commutative, exact.
Mat4 combine(Mat4 a, Mat4 b) {
  Mat4 r;
  for (int j = 0; j < 4; ++j) r.c[j] = a.c[0] * b.c[j].x + a.c[1] * b.c[j].y + a.c[2] * b.c[j].z + a.c[3] * b.c[j].w;
  return r;
}
