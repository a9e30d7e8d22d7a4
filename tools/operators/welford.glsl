// Welford's running (count, mean, M2) merged as in Chan, Golub & LeVeque, "Updating formulae and a
// pairwise algorithm for computing sample variances" (1979). Associative up to rounding.
// No branch: two empty states divide by 1 instead of 0 (their weights b.n and a.n * b.n are 0).
Welford combine(Welford a, Welford b) {
  const float n = a.n + b.n;
  const float divisor = n == 0.0 ? 1.0 : n;
  const float d = b.mean - a.mean;
  return Welford(n, a.mean + d * (b.n / divisor), a.m2 + b.m2 + d * d * (a.n * b.n / divisor));
}
