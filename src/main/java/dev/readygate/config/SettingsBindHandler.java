package dev.readygate.config;

import java.util.List;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Turns a failure to bind a {@code readygate.*} setting into an {@link InvalidSettingsException} that says it in the
 * user's terms ({@link RejectedSetting}); failures of other prefixes go on unchanged.
 */
final class SettingsBindHandler extends AbstractBindHandler {

    private final SettingsMetadata metadata;

    SettingsBindHandler(BindHandler parent, SettingsMetadata metadata) {
        super(parent);
        this.metadata = metadata;
    }

    @Override
    public Object onFailure(ConfigurationPropertyName name, Bindable<?> target, BindContext context, Exception error)
            throws Exception {
        if (!(SettingsMetadata.ROOT.equals(name) || SettingsMetadata.ROOT.isAncestorOf(name)) || said(error)) {
            return super.onFailure(name, target, context, error);
        }
        throw new InvalidSettingsException(List.of(RejectedSetting.describe(
                name, target.getType(), context.getConfigurationProperty(), error, context.getSources(), metadata)));
    }

    /** Whether a nested binding already said it (the record around a refused setting fails with it). */
    private static boolean said(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidSettingsException) {
                return true;
            }
        }
        return false;
    }
}
