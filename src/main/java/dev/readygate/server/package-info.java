/** readygate's own HTTP server: its connection cap and idle timeout, so that it stays answerable to the kubelet. */
@NullMarked
package dev.readygate.server;

import org.jspecify.annotations.NullMarked;
