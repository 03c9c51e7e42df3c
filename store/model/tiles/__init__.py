"""C2SP tlog-tiles: the layout of a tiled log's static resources (`layout`), independent of
where the hashes and entries come from."""
