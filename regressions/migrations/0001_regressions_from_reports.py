"""Bug, Regression and TriageEvent come over from reports with their tables: this only tells Django's state.

The tables (reports_bug, reports_regression, reports_regression_bugs,
reports_triageevent) and their rows stay where they are; reports 0005 drops the
models from that app's state, and 0002 here moves their content types so
permissions granted on them survive.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('reports', '0004_series_summaries'),
        # The role migrations grant reports.* permissions on these models: they run while the models are there.
        ('runs', '0007_role_permissions'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Bug',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('tracker', models.CharField(choices=[('mariadb-jira', 'MariaDB Jira'), ('percona-jira', 'Percona Jira'), ('mysql', 'MySQL bugs'), ('rocksdb-github', 'RocksDB GitHub'), ('url', 'link')], max_length=32)),
                        ('key', models.CharField(max_length=500)),
                        ('title', models.CharField(blank=True, max_length=300)),
                        ('url', models.URLField(max_length=500)),
                        ('status', models.CharField(blank=True, help_text='As the tracker says: open, verified, closed, …', max_length=64)),
                        ('fixed_in', models.CharField(blank=True, help_text='Versions the tracker says carry the fix', max_length=200)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'reports_bug',
                        'ordering': ['tracker', 'key'],
                        'constraints': [models.UniqueConstraint(fields=('tracker', 'key'), name='bug_unique_per_tracker')],
                    },
                ),
                migrations.CreateModel(
                    name='Regression',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('group', models.CharField(blank=True, max_length=100)),
                        ('group_set', models.CharField(blank=True, max_length=100)),
                        ('kind', models.CharField(choices=[('regression', 'Regression'), ('improvement', 'Improvement')], default='regression', max_length=16)),
                        ('level_before', models.FloatField(blank=True, help_text='Relative QPS before the step (vs the base)', null=True)),
                        ('level_after', models.FloatField(blank=True, help_text='Relative QPS after the step (vs the base)', null=True)),
                        ('change', models.FloatField(blank=True, help_text='level_after / level_before − 1', null=True)),
                        ('threshold', models.FloatField(blank=True, help_text='The gate |change| had to pass (noise, min change)', null=True)),
                        ('evidence', models.JSONField(blank=True, default=dict)),
                        ('state', models.CharField(choices=[('new', 'New'), ('acknowledged', 'Acknowledged'), ('bug_filed', 'bug filed'), ('fixed', 'Fixed'), ('expected', 'Expected'), ('noise', 'Noise')], db_index=True, default='new', max_length=16)),
                        ('detected_at', models.DateTimeField(blank=True, help_text='Last time detection found it', null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('arrived_in', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='regressions_arrived', to='runs.version')),
                        ('arrived_in_build', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='regressions_arrived', to='runs.build')),
                        ('base_run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='runs.run')),
                        ('bugs', models.ManyToManyField(blank=True, db_table='reports_regression_bugs', related_name='regressions', to='regressions.bug')),
                        ('fixed_in', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='regressions_fixed', to='runs.version')),
                        ('microbenchmark', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='regressions', to='runs.microbenchmark')),
                        ('persists_until', models.ForeignKey(blank=True, help_text='The newest version that still shows it', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='runs.version')),
                        ('previous_version', models.ForeignKey(blank=True, help_text='The last version at the old level: it arrived between this one and arrived_in', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='runs.version')),
                        ('server', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='regressions', to='runs.server')),
                        ('workload', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='regressions', to='runs.workload')),
                    ],
                    options={
                        'db_table': 'reports_regression',
                        'ordering': ['server__name', 'workload__name', 'arrived_in__sort_key', 'group', 'pk'],
                    },
                ),
                migrations.CreateModel(
                    name='TriageEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('from_state', models.CharField(choices=[('new', 'New'), ('acknowledged', 'Acknowledged'), ('bug_filed', 'bug filed'), ('fixed', 'Fixed'), ('expected', 'Expected'), ('noise', 'Noise')], max_length=16)),
                        ('to_state', models.CharField(choices=[('new', 'New'), ('acknowledged', 'Acknowledged'), ('bug_filed', 'bug filed'), ('fixed', 'Fixed'), ('expected', 'Expected'), ('noise', 'Noise')], max_length=16)),
                        ('note', models.TextField(blank=True)),
                        ('regression', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='regressions.regression')),
                        ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'reports_triageevent',
                        'ordering': ['at', 'pk'],
                    },
                ),
                migrations.AddIndex(
                    model_name='regression',
                    index=models.Index(fields=['server', 'workload'], name='regression_series'),
                ),
                migrations.AddConstraint(
                    model_name='regression',
                    constraint=models.UniqueConstraint(condition=models.Q(('microbenchmark__isnull', False)), fields=('server', 'workload', 'microbenchmark', 'kind', 'arrived_in'), name='regression_unique_microbenchmark'),
                ),
                migrations.AddConstraint(
                    model_name='regression',
                    constraint=models.UniqueConstraint(condition=models.Q(('microbenchmark__isnull', True)), fields=('server', 'workload', 'group', 'kind', 'arrived_in'), name='regression_unique_group'),
                ),
                migrations.AddConstraint(
                    model_name='regression',
                    constraint=models.CheckConstraint(condition=models.Q(('microbenchmark__isnull', False), models.Q(('group', ''), _negated=True), _connector='OR'), name='regression_has_subject'),
                ),
            ],
        ),
    ]
