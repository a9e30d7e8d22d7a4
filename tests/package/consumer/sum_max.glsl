// The consumer's own operator: a wrapping sum of the first member and the max of the second.
SumMax combine(SumMax a, SumMax b) { return SumMax(a.sum + b.sum, max(a.hi, b.hi)); }
