// A combine glslang rejects (no member `nothing`): the engine's build must stop with glslang's message.
SumMax combine(SumMax a, SumMax b) { return SumMax(a.sum + b.nothing, a.hi); }
