/** readygate: a sidecar that tells Kubernetes whether a vLLM engine can really serve. */
@NullMarked
package dev.readygate;

import org.jspecify.annotations.NullMarked;
