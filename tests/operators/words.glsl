// Test operator for any number of words (tests/CMakeLists.txt: words1, words4, words5, words8, words12): word pairs
// are maps x -> x * m + c on wrapping u32 (w[2i] = m, w[2i + 1] = c), composed a then b; an odd last word
// takes b's unless it is zero. Associative, not commutative, exact. VALUE_T names the operator's struct
// (the generated vkprim_user_operator.glsl defines it before including this file).
VALUE_T combine(VALUE_T a, VALUE_T b) {
  VALUE_T r = b;
  const int n = a.w.length();
  for (int i = 0; i + 1 < n; i += 2) {
    r.w[i] = a.w[i] * b.w[i];
    r.w[i + 1] = a.w[i + 1] * b.w[i] + b.w[i + 1];
  }
  if ((n & 1) == 1 && b.w[n - 1] == 0u) r.w[n - 1] = a.w[n - 1];
  return r;
}
