"""Studies still in use beside the release path (models/README.md)."""
