"""What PCM keeps in Redis besides the streams: every key name (`keys`) and Lua script
(`scripts`), key locks, the strength overlay, the routine index, scope policies and
tombstones."""
