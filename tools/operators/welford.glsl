// Welford's running (count, mean, M2) merged as in Chan, Golub & LeVeque, "Updating formulae and a
// pairwise algorithm for computing sample variances" (1979). Associative up to rounding.
Welford combine(Welford a, Welford b) {
  const float n = a.n + b.n;
  if (n == 0.0) return a;
  const float d = b.mean - a.mean;
  return Welford(n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * b.n / n));
}
