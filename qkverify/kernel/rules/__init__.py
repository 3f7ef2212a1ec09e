"""The kernel's claim table, one module per blueprint section (importing this
package registers every entry in :data:`qkverify.kernel.table.TABLE`)."""

from . import clusters, energy, heads, profile  # noqa: F401
