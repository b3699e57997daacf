"""The admin's name for RetentionClass in the plural ("retention classes"). State only: no SQL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("headgate", "0003_duty_run")]

    operations = [
        migrations.AlterModelOptions(
            name="retentionclass",
            options={"ordering": ["key"], "verbose_name_plural": "retention classes"},
        ),
    ]
