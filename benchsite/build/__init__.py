"""The build: the MkDocs plugins, the build cache, the workers that fill it, and writing the
site. The only layer that talks to MkDocs; it may import every layer below it."""
