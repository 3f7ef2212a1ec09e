"""The kernel's claim table, one module per blueprint section (importing this
package registers every entry in :data:`qkverify.kernel.table.TABLE`)."""

from . import accumulation, attention, balance, energy, heads, laws, moments, profile, rank_one, rope  # noqa: F401
