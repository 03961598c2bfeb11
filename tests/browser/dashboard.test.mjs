// node dashboard.test.mjs LOGIN_URL BASE_URL ARTIFACTS_DIR PROFILE_DIR
// Drives Debian's chromium (headless, through playwright-core) over the dashboard the way
// a person would: open the login link, read the verdict table, filter by domain, open a
// job and read its evidence chain and coverage matrix. Saves screenshots in ARTIFACTS_DIR.
// The archive is tests/support/dashboard_archive.h's known set (run_dashboard_test.sh).
import assert from 'node:assert/strict';
import {mkdirSync, rmSync} from 'node:fs';
import {createRequire} from 'node:module';
import path from 'node:path';

const [loginUrl, base, artifacts, profile] = process.argv.slice(2);
// playwright-core lives in the build tree (npm ci there), not next to this file.
const require = createRequire(path.join(artifacts, '..', 'package.json'));
const {chromium} = require('playwright-core');

const TIMEOUT = 20000;
rmSync(profile, {recursive: true, force: true});
mkdirSync(profile, {recursive: true});

// The flags /work/.library/env/machines/cpp.md found to work here: no sandbox (root), no
// GPU, and none of Chromium's own network traffic (this machine's network is closed).
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: {width: 1360, height: 900},
});
const failures = [];
const foreign = [];
let step = 'start';
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (e) => failures.push('page error: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') failures.push('console: ' + m.text()); });
  page.on('request', (r) => { if (!r.url().startsWith(base)) foreign.push(r.url()); });

  step = 'without a session the page says how to log in';
  const anonymous = await page.goto(base + '/');
  assert.equal(anonymous.status(), 401);
  assert.match(await page.locator('body').innerText(), /attrib-show --dashboard/);
  failures.length = 0;  // the 401 itself is logged by the browser as a failed resource

  step = 'log in with the link from attrib-show --dashboard';
  assert.ok(new URL(loginUrl).hash.startsWith('#cred='), 'the credential is in the fragment, never sent in a URL');
  await page.goto(loginUrl);
  await page.waitForURL(base + '/');  // login.js posts the credential, then opens the dashboard
  assert.ok(!page.url().includes('cred='), 'the credential leaves the address bar');
  await page.locator('#who').filter({hasText: 'admin'}).waitFor();
  assert.match(await page.locator('#who').innerText(), /root \(uid 0\), admin: all jobs/);

  step = 'the verdict table shows the archive (last 30 days)';
  const rows = page.locator('#verdicts tbody tr.verdict-row');
  await rows.first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#verdicts tbody tr.verdict-row').length === 8);
  const jobs = await page.locator('#verdicts a.job-link').allInnerTexts();
  assert.deepEqual(jobs, ['5006', '5001', '5003', '5004', '5002', '5005', '5007', '5008'], 'newest first');
  const first = await rows.nth(1).locator('td').allInnerTexts();
  assert.equal(first[1], '5001');
  assert.equal(first[2], 'alice');
  assert.equal(first[3], 'FAILED');
  assert.equal(first[4], 'GPU_HARDWARE');
  assert.equal(first[5], 'gpu.fallen_off_bus');
  assert.equal(first[6], 'gpu017');
  assert.equal(first[7], 'DRAIN_NODE');
  const totals = await page.locator('#counts-totals tr.total-row').allInnerTexts();
  assert.ok(totals.some((t) => /GPU_HARDWARE\s+3/.test(t)), 'GPU_HARDWARE counted 3 times: ' + totals);
  assert.ok(await page.locator('#counts-chart svg rect').count() >= 7, 'the chart has bars');

  step = 'repeat offenders: gpu017 was blamed twice';
  const offender = page.locator('#offenders tr.offender-row', {hasText: 'gpu017'}).first();
  await offender.waitFor();
  assert.match(await offender.innerText(), /5002, 5001/);
  step = 'unexplained messages: the mined template and its jobs';
  const template = page.locator('#unexplained tr.template-row', {hasText: 'widget controller'}).first();
  await template.waitFor();
  assert.match(await template.innerText(), /5003, 5004/);
  assert.equal(await template.locator('a').first().getAttribute('href'), '#/job/lab/5003');
  await page.screenshot({path: path.join(artifacts, 'dashboard-list.png'), fullPage: true});

  step = 'filter by domain';
  await page.selectOption('#f-domain', 'GPU_HARDWARE');
  await page.click('#filters button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#verdicts tbody tr.verdict-row').length === 3);
  assert.deepEqual(await page.locator('#verdicts a.job-link').allInnerTexts(), ['5001', '5002', '5008']);
  for (const domain of await page.locator('#verdicts td.domain').allInnerTexts()) assert.equal(domain, 'GPU_HARDWARE');
  await page.selectOption('#f-domain', 'NETWORK');
  await page.click('#filters button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#verdicts tbody tr.verdict-row').length === 1);
  assert.deepEqual(await page.locator('#verdicts a.job-link').allInnerTexts(), ['5004']);
  await page.screenshot({path: path.join(artifacts, 'dashboard-filtered.png'), fullPage: true});

  step = 'open a job page';
  await page.selectOption('#f-domain', 'GPU_HARDWARE');
  await page.click('#filters button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#verdicts tbody tr.verdict-row').length === 3);
  await page.click('#verdicts a.job-link >> text=5001');
  await page.locator('#root-cause').waitFor();
  assert.match(page.url(), /#\/job\/lab\/5001$/);
  assert.match(await page.locator('#job-title').innerText(), /Job 5001/);
  assert.equal(await page.locator('#job-domain').innerText(), 'GPU_HARDWARE');
  assert.equal(await page.locator('#job-action').innerText(), 'DRAIN_NODE');

  step = 'the evidence chain: root cause, then the symptoms it explains with their rules';
  const root = await page.locator('#root-cause').innerText();
  assert.match(root, /Root cause: gpu\.fallen_off_bus/);
  assert.match(root, /gpu\.xid on gpu017 \(kernel, trusted\)/);
  assert.match(root, /Xid .*79/);
  const symptoms = page.locator('table.symptoms tr.symptom-row');
  assert.ok(await symptoms.count() >= 3, 'symptoms listed');
  const explainedBy = await page.locator('table.symptoms td.explained-by').allInnerTexts();
  assert.ok(explainedBy.every((rule) => /^[a-z0-9_]+\.[a-z0-9_.]+$/.test(rule)), 'each symptom names its rule: ' + explainedBy);
  const symptomText = await page.locator('table.symptoms').innerText();
  assert.match(symptomText, /nccl\.watchdog_timeout/);
  assert.match(symptomText, /gpu001/);

  step = 'the coverage matrix node × source';
  const matrix = page.locator('#coverage');
  const heads = await matrix.locator('thead th').allInnerTexts();
  assert.ok(heads.includes('kernel'), 'a kernel column: ' + heads);
  const matrixNodes = await matrix.locator('tbody th').allInnerTexts();
  assert.deepEqual(matrixNodes, ['gpu001', 'gpu002', 'gpu017']);
  const gpu017 = await matrix.locator('tbody tr', {hasText: 'gpu017'}).innerText();
  assert.match(gpu017, /ok/);
  await page.screenshot({path: path.join(artifacts, 'dashboard-job.png'), fullPage: true});

  step = 'back to the list keeps the filter';
  await page.click('#back');
  await page.waitForFunction(() => document.querySelectorAll('#verdicts tbody tr.verdict-row').length === 3);

  step = 'nothing was fetched from anywhere else and the page logged no error';
  assert.deepEqual(foreign, []);
  assert.deepEqual(failures, []);
  console.log('dashboard browser test passed; screenshots in ' + artifacts);
} catch (error) {
  console.error(`FAILED at "${step}": ${error.message}`);
  for (const page of context.pages())
    await page.screenshot({path: path.join(artifacts, 'failure.png'), fullPage: true}).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close();
}
