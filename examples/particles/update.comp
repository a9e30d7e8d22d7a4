// The engine's own particle update: integrates `steps` fixed steps of `dt` seconds, then writes the
// per-frame streams vkprim consumes (positions as separate f32 arrays, the alive flag, the spatial
// cell key) and counts live particles per cell with an atomic histogram.
//
// The host replays this exactly (main.cpp, cpu_update), so every operation must round the same way on
// both sides: dt and gravity*dt are powers of two (v * dt is exact, so a fused multiply-add cannot
// change a result), every value is `precise` (no contraction or reassociation), and there is no
// transcendental or division. Vulkan requires + - * of floats to be correctly rounded.
#version 450
layout(local_size_x = 256) in;

struct Particle {
  vec2 position;
  vec2 velocity;
  float life;      // seconds left; dead at <= 0
  float unused;
};

layout(std430, binding = 0) buffer Particles { Particle particles[]; };
layout(std430, binding = 1) writeonly buffer PositionX { float position_x[]; };
layout(std430, binding = 2) writeonly buffer PositionY { float position_y[]; };
layout(std430, binding = 3) writeonly buffer Alive { uint alive[]; };
layout(std430, binding = 4) writeonly buffer CellKey { uint cell_key[]; };
layout(std430, binding = 5) buffer CellCount { uint cell_count[]; };

layout(push_constant) uniform Push {
  uint count;
  uint steps;
  float dt;          // a power of two
  float gravity_dt;  // gravity * dt, exact
  float world_half;  // the world box is [-world_half, world_half]^2
  float inv_cell;    // 1 / cell size, a power of two
  uint grid;         // cells per axis
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  Particle p = particles[i];
  precise vec2 pos = p.position;
  precise vec2 vel = p.velocity;
  precise float life = p.life;

  for (uint s = 0; s < pc.steps && life > 0.0; ++s) {
    vel.y = vel.y + pc.gravity_dt;
    pos = pos + vel * pc.dt;
    // Bounce off the walls of the world box: mirror the position (one rounding) and the velocity (exact).
    const float wall = 2.0 * pc.world_half;
    if (pos.x < -pc.world_half) { pos.x = -wall - pos.x; vel.x = -vel.x; }
    if (pos.x > pc.world_half) { pos.x = wall - pos.x; vel.x = -vel.x; }
    if (pos.y < -pc.world_half) { pos.y = -wall - pos.y; vel.y = -vel.y; }
    if (pos.y > pc.world_half) { pos.y = wall - pos.y; vel.y = -vel.y; }
    life = life - pc.dt;
  }
  particles[i] = Particle(pos, vel, life, 0.0);

  // Grid cell of the position: (pos + half) is >= 0, so the conversion truncates like floor.
  precise vec2 cell = (pos + vec2(pc.world_half)) * pc.inv_cell;
  const uint cx = min(uint(cell.x), pc.grid - 1);
  const uint cy = min(uint(cell.y), pc.grid - 1);
  const uint key = cy * pc.grid + cx;
  const bool is_alive = life > 0.0;

  position_x[i] = pos.x;
  position_y[i] = pos.y;
  alive[i] = is_alive ? 1u : 0u;
  cell_key[i] = key;
  if (is_alive) atomicAdd(cell_count[key], 1u);
}
