/** readygate's configuration ({@code readygate.*}) and the infrastructure beans every feature shares. */
@NullMarked
package dev.readygate.config;

import org.jspecify.annotations.NullMarked;
