"""The independent certificate kernel.  Imports only the standard library,
python-flint and jsonschema -- nothing else of qkverify."""
