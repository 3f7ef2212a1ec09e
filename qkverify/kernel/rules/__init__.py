"""The kernel's claim table, one module per blueprint section (importing this
package registers every entry in :data:`qkverify.kernel.table.TABLE`)."""

from . import accumulation, energy, heads, moments, profile  # noqa: F401
