"""The kernel's claim table, one module per blueprint section (importing this
package registers every entry in :data:`qkverify.kernel.table.TABLE`)."""

from . import attention, energy, heads, profile, rope  # noqa: F401
