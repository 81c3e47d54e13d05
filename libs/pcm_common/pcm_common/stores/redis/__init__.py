"""What PCM keeps in Redis besides the streams: key locks, the strength overlay, the routine
index, scope policies and tombstones."""
