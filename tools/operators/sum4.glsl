// Componentwise vec4 sum (particle centroids): the bench's 16-byte user operator.
Sum4 combine(Sum4 a, Sum4 b) { return Sum4(a.v + b.v); }
