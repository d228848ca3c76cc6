"""An independent secrets corpus: token formats as their vendors document them, not as any
scanner's rule set writes them or gives examples of them.

Each format is a template read off the vendor's own documentation (the page is named beside
it): a literal prefix and bodies of a given alphabet and length. The tokens are generated
here at run time from those parts with a fixed seed, so no file of the repository holds a
token a push-protection scanner would stop, and no token is copied from gitleaks' or Nosey
Parker's examples, the rule sets gitpub loads.

Each token is then placed the ways a writer pastes one (`PLACEMENTS`): bare on its line, in
an English sentence (mid-sentence and closing it), glued to Chinese text with full-width
punctuation, in an assignment and in code. `PASSWORDS` are credentials that carry no prefix
(the forms people paste a password in), `DEMOS` the demo values real tutorials show, which
are no secrets."""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

ALPHABETS = {
    "a": string.ascii_letters + string.digits,  # alphanumeric, both cases
    "l": string.ascii_lowercase + string.digits,
    "u": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "d": string.digits,
    "z": string.ascii_letters,  # letters only
    "w": string.ascii_letters + string.digits + "_-",  # URL-safe base64
    "s": string.ascii_letters + string.digits + "+/",  # base64
    "b": string.ascii_uppercase + "234567",  # base32
}


class Format(NamedTuple):
    name: str
    template: str  # literal text with {alphabet:length} bodies
    source: str  # the vendor page documenting the format
    ai: bool = False
    var: str = "API_KEY"  # the variable an assignment names it by


def _f(name: str, template: str, source: str, var: str = "API_KEY", ai: bool = False) -> Format:
    return Format(name, template, source, ai, var)


def _ai(name: str, template: str, source: str, var: str) -> Format:
    return Format(name, template, source, True, var)


FORMATS: tuple[Format, ...] = (
    # --- AI providers -----------------------------------------------------------------------
    _ai(
        "openai-project",
        "sk-proj-{w:156}",
        "platform.openai.com/docs/api-reference/authentication",
        "OPENAI_API_KEY",
    ),
    _ai(
        "openai-svcacct",
        "sk-svcacct-{w:156}",
        "platform.openai.com/docs/api-reference/authentication (service accounts)",
        "OPENAI_API_KEY",
    ),
    _ai(
        "openai-admin",
        "sk-admin-{w:156}",
        "platform.openai.com/docs/api-reference/administration",
        "OPENAI_ADMIN_KEY",
    ),
    _ai(
        "openai-legacy",
        "sk-{a:20}T3BlbkFJ{a:20}",
        "help.openai.com, API key safety (user keys before 2024)",
        "OPENAI_API_KEY",
    ),
    _ai(
        "anthropic",
        "sk-ant-api03-{w:93}AA",
        "docs.anthropic.com/en/api/getting-started",
        "ANTHROPIC_API_KEY",
    ),
    _ai(
        "anthropic-admin",
        "sk-ant-admin01-{w:93}AA",
        "docs.anthropic.com/en/api/administration-api",
        "ANTHROPIC_ADMIN_KEY",
    ),
    _ai(
        "openrouter",
        "sk-or-v1-{h:64}",
        "openrouter.ai/docs/api-reference/authentication",
        "OPENROUTER_API_KEY",
    ),
    _ai("xai", "xai-{a:80}", "docs.x.ai/docs/tutorial", "XAI_API_KEY"),
    _ai("deepseek", "sk-{h:32}", "api-docs.deepseek.com (first API call)", "DEEPSEEK_API_KEY"),
    _ai(
        "elevenlabs",
        "sk_{h:48}",
        "elevenlabs.io/docs/api-reference/authentication",
        "ELEVENLABS_API_KEY",
    ),
    _ai(
        "pinecone",
        "pcsk_{a:5}_{a:63}",
        "docs.pinecone.io/guides/projects/manage-api-keys",
        "PINECONE_API_KEY",
    ),
    _ai(
        "replicate",
        "r8_{a:37}",
        "replicate.com/docs/reference/http#authentication",
        "REPLICATE_API_TOKEN",
    ),
    _ai(
        "langsmith-pat",
        "lsv2_pt_{h:32}_{h:10}",
        "docs.smith.langchain.com/administration/how_to_guides/organization_management/create_account_api_key",
        "LANGSMITH_API_KEY",
    ),
    _ai(
        "langsmith-service",
        "lsv2_sk_{h:32}_{h:10}",
        "docs.smith.langchain.com (service keys)",
        "LANGSMITH_API_KEY",
    ),
    _ai("huggingface", "hf_{z:34}", "huggingface.co/docs/hub/security-tokens", "HF_TOKEN"),
    _ai("groq", "gsk_{a:52}", "console.groq.com/docs/quickstart", "GROQ_API_KEY"),
    _ai("google-ai", "AIza{w:35}", "ai.google.dev/gemini-api/docs/api-key", "GEMINI_API_KEY"),
    _ai(
        "perplexity",
        "pplx-{a:48}",
        "docs.perplexity.ai/guides/getting-started",
        "PERPLEXITY_API_KEY",
    ),
    _ai(
        "together",
        "tgp_v1_{w:43}",
        "docs.together.ai/reference/authentication-1",
        "TOGETHER_API_KEY",
    ),
    _ai(
        "fireworks",
        "fw_{a:24}",
        "docs.fireworks.ai/api-reference/introduction",
        "FIREWORKS_API_KEY",
    ),
    _ai("cerebras", "csk-{l:48}", "inference-docs.cerebras.ai/quickstart", "CEREBRAS_API_KEY"),
    _ai("voyage", "pa-{w:43}", "docs.voyageai.com/docs/api-key-and-installation", "VOYAGE_API_KEY"),
    _ai(
        "nvidia",
        "nvapi-{w:64}",
        "docs.api.nvidia.com/nim/reference/authentication",
        "NVIDIA_API_KEY",
    ),
    _ai(
        "langfuse",
        "sk-lf-{h:8}-{h:4}-{h:4}-{h:4}-{h:12}",
        "langfuse.com/docs/get-started",
        "LANGFUSE_SECRET_KEY",
    ),
    _ai("tavily", "tvly-{a:32}", "docs.tavily.com/documentation/quickstart", "TAVILY_API_KEY"),
    _ai("firecrawl", "fc-{h:32}", "docs.firecrawl.dev/introduction", "FIRECRAWL_API_KEY"),
    _ai("llamacloud", "llx-{a:48}", "docs.cloud.llamaindex.ai/api_key", "LLAMA_CLOUD_API_KEY"),
    _ai(
        "dashscope", "sk-{h:32}", "help.aliyun.com/zh/model-studio/get-api-key", "DASHSCOPE_API_KEY"
    ),
    _ai(
        "modal",
        "as-{a:22}",
        "modal.com/docs/reference/modal.config (token secret)",
        "MODAL_TOKEN_SECRET",
    ),
    # --- code hosting and CI ----------------------------------------------------------------
    _f(
        "github-classic",
        "ghp_{a:36}",
        "docs.github.com/authentication/keeping-your-account-and-data-secure/about-authentication-to-github#githubs-token-formats",
        "GITHUB_TOKEN",
    ),
    _f(
        "github-fine-grained",
        "github_pat_{a:22}_{a:59}",
        "docs.github.com (token formats)",
        "GITHUB_TOKEN",
    ),
    _f("github-oauth", "gho_{a:36}", "docs.github.com (token formats)", "GITHUB_TOKEN"),
    _f("github-app-install", "ghs_{a:36}", "docs.github.com (token formats)", "GITHUB_TOKEN"),
    _f(
        "gitlab-pat",
        "glpat-{w:20}",
        "docs.gitlab.com/security/tokens/#token-prefixes",
        "GITLAB_TOKEN",
    ),
    _f(
        "gitlab-deploy",
        "gldt-{w:20}",
        "docs.gitlab.com/security/tokens/#token-prefixes",
        "GITLAB_TOKEN",
    ),
    _f(
        "gitlab-runner",
        "glrt-{w:20}",
        "docs.gitlab.com/security/tokens/#token-prefixes",
        "RUNNER_TOKEN",
    ),
    _f(
        "bitbucket-app-password",
        "ATBB{a:32}{H:8}",
        "support.atlassian.com/bitbucket-cloud/docs/app-passwords",
        "BITBUCKET_APP_PASSWORD",
    ),
    _f(
        "atlassian-api-token",
        "ATATT3xFfGF0{w:180}={H:8}",
        "support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account",
        "JIRA_API_TOKEN",
    ),
    _f(
        "buildkite",
        "bkua_{h:40}",
        "buildkite.com/docs/apis/managing-api-tokens",
        "BUILDKITE_API_TOKEN",
    ),
    _f(
        "circleci",
        "CCIPAT_{a:22}_{h:40}",
        "circleci.com/docs/managing-api-tokens",
        "CIRCLECI_TOKEN",
    ),
    _f("npm", "npm_{a:36}", "npm's documentation on access tokens", "NPM_TOKEN"),
    _f(
        "pypi",
        "pypi-AgEIcHlwaS5vcmc{w:150}",
        "the package index's help page on API tokens",
        "PYPI_TOKEN",
    ),
    _f(
        "dockerhub",
        "dckr_pat_{w:27}",
        "docs.docker.com/security/for-developers/access-tokens",
        "DOCKER_TOKEN",
    ),
    _f(
        "postman",
        "PMAK-{h:24}-{h:34}",
        "learning.postman.com/docs/developer/postman-api/authentication",
        "POSTMAN_API_KEY",
    ),
    # --- cloud and hosting --------------------------------------------------------------------
    _f(
        "aws-access-key-id",
        "AKIA{b:16}",
        "docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html",
        "AWS_ACCESS_KEY_ID",
    ),
    _f(
        "gcp-oauth-secret",
        "GOCSPX-{w:28}",
        "developers.google.com/identity/protocols/oauth2 (client secrets)",
        "GOOGLE_CLIENT_SECRET",
    ),
    _f(
        "google-refresh",
        "1//0{w:100}",
        "developers.google.com/identity/protocols/oauth2",
        "GOOGLE_REFRESH_TOKEN",
    ),
    _f(
        "azure-ad-secret",
        "{a:3}8Q~{w:31}",
        "learn.microsoft.com/entra/identity-platform/howto-create-service-principal-portal",
        "AZURE_CLIENT_SECRET",
    ),
    _f(
        "azure-redis",
        "myapp.redis.cache.windows.net:6380,password={s:43}=,ssl=True,abortConnect=False",
        "learn.microsoft.com/azure/azure-cache-for-redis/cache-dotnet-how-to-use-azure-redis-cache",
        "REDIS_CONNECTION",
    ),
    _f(
        "azure-sql-jdbc",
        "jdbc:sqlserver://myapp.database.windows.net:1433;database=shop;user=shopadmin@myapp;password=Qw{a:14}!9;encrypt=true;",
        "learn.microsoft.com/azure/azure-sql/database/connect-query-java",
        "JDBC_URL",
    ),
    _f(
        "azure-storage",
        "DefaultEndpointsProtocol=https;AccountName=myappstore;AccountKey={s:86}==;EndpointSuffix=core.windows.net",
        "learn.microsoft.com/azure/storage/common/storage-configure-connection-string",
        "AZURE_STORAGE_CONNECTION_STRING",
    ),
    _f(
        "digitalocean",
        "dop_v1_{h:64}",
        "docs.digitalocean.com/reference/api/create-personal-access-token",
        "DIGITALOCEAN_TOKEN",
    ),
    _f(
        "tencent-secret-id",
        "AKID{a:32}",
        "cloud.tencent.com/document/product/598/40488",
        "TENCENTCLOUD_SECRET_ID",
    ),
    _f(
        "alibaba-access-key-id",
        "LTAI{a:20}",
        "help.aliyun.com/zh/ram/user-guide/create-an-accesskey-pair",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
    ),
    _f(
        "supabase",
        "sbp_{h:40}",
        "supabase.com/docs/reference/api/introduction (access tokens)",
        "SUPABASE_ACCESS_TOKEN",
    ),
    _f(
        "supabase-secret",
        "sb_secret_{w:31}",
        "supabase.com/docs/guides/api/api-keys",
        "SUPABASE_SECRET_KEY",
    ),
    _f(
        "netlify",
        "nfp_{a:36}",
        "docs.netlify.com/api/get-started/#authentication",
        "NETLIFY_AUTH_TOKEN",
    ),
    _f("fly", "FlyV1 fm2_{s:300}", "fly.io/docs/security/tokens", "FLY_API_TOKEN"),
    _f(
        "tailscale-auth",
        "tskey-auth-{a:12}CNTRL-{a:33}",
        "tailscale.com/kb/1085/auth-keys",
        "TS_AUTHKEY",
    ),
    _f("tailscale-api", "tskey-api-{a:12}CNTRL-{a:33}", "tailscale.com/kb/1101/api", "TS_API_KEY"),
    _f(
        "vault",
        "hvs.{w:90}",
        "developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
        "VAULT_TOKEN",
    ),
    _f(
        "terraform-cloud",
        "{a:14}.atlasv1.{a:67}",
        "developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens",
        "TFE_TOKEN",
    ),
    _f("doppler", "dp.pt.{a:43}", "docs.doppler.com/reference/auth-token-formats", "DOPPLER_TOKEN"),
    _f(
        "planetscale",
        "pscale_tkn_{w:43}",
        "planetscale.com/docs/concepts/service-tokens",
        "PLANETSCALE_TOKEN",
    ),
    _f(
        "planetscale-password",
        "pscale_pw_{w:43}",
        "planetscale.com/docs/concepts/connection-strings",
        "DATABASE_PASSWORD",
    ),
    _f(
        "pulumi",
        "pul-{h:40}",
        "www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens",
        "PULUMI_ACCESS_TOKEN",
    ),
    _f("render", "rnd_{a:32}", "render.com/docs/api#1-create-an-api-key", "RENDER_API_KEY"),
    _f(
        "prefect",
        "pnu_{a:36}",
        "docs.prefect.io/v3/manage/cloud/manage-users/api-keys",
        "PREFECT_API_KEY",
    ),
    _f(
        "grafana-sa",
        "glsa_{a:32}_{h:8}",
        "grafana.com/docs/grafana/latest/administration/service-accounts",
        "GRAFANA_TOKEN",
    ),
    _f(
        "newrelic-user",
        "NRAK-{u:27}",
        "docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys",
        "NEW_RELIC_API_KEY",
    ),
    _f("sentry-user", "sntryu_{h:64}", "docs.sentry.io/account/auth-tokens", "SENTRY_AUTH_TOKEN"),
    _f(
        "infracost",
        "ico-{a:32}",
        "www.infracost.io/docs/features/cli_commands",
        "INFRACOST_API_KEY",
    ),
    # --- payments -----------------------------------------------------------------------------
    _f("stripe-secret", "sk_live_{a:99}", "docs.stripe.com/keys", "STRIPE_SECRET_KEY"),
    _f("stripe-restricted", "rk_live_{a:99}", "docs.stripe.com/keys#limit-access", "STRIPE_KEY"),
    _f(
        "stripe-webhook",
        "whsec_{a:32}",
        "docs.stripe.com/webhooks#verify-official-libraries",
        "STRIPE_WEBHOOK_SECRET",
    ),
    _f(
        "braintree",
        "access_token$production${l:16}${h:32}",
        "developer.paypal.com/braintree/docs/guides/authorization/access-token",
        "BRAINTREE_ACCESS_TOKEN",
    ),
    _f("razorpay", "rzp_live_{a:14}", "razorpay.com/docs/api/authentication", "RAZORPAY_KEY_ID"),
    _f(
        "square",
        "EAAA{w:60}",
        "developer.squareup.com/docs/build-basics/access-tokens",
        "SQUARE_ACCESS_TOKEN",
    ),
    _f(
        "shopify-admin",
        "shpat_{h:32}",
        "shopify.dev/docs/apps/build/authentication-authorization/access-tokens",
        "SHOPIFY_ACCESS_TOKEN",
    ),
    _f(
        "flutterwave",
        "FLWSECK-{h:32}-X",
        "developer.flutterwave.com/docs/integration-guides/authentication",
        "FLW_SECRET_KEY",
    ),
    _f("paystack", "sk_live_{h:40}", "paystack.com/docs/api/authentication", "PAYSTACK_SECRET_KEY"),
    _f(
        "shippo",
        "shippo_live_{h:40}",
        "docs.goshippo.com/docs/guides_general/authentication",
        "SHIPPO_API_TOKEN",
    ),
    # --- messaging, webhooks, SaaS ------------------------------------------------------------
    _f(
        "slack-bot",
        "xoxb-{d:12}-{d:13}-{a:24}",
        "api.slack.com/concepts/token-types",
        "SLACK_BOT_TOKEN",
    ),
    _f(
        "slack-user",
        "xoxp-{d:12}-{d:12}-{d:13}-{h:32}",
        "api.slack.com/concepts/token-types",
        "SLACK_TOKEN",
    ),
    _f(
        "slack-app",
        "xapp-1-A{u:10}-{d:13}-{h:64}",
        "api.slack.com/concepts/token-types",
        "SLACK_APP_TOKEN",
    ),
    _f(
        "slack-webhook",
        "https://hooks.slack.com/services/T{u:10}/B{u:10}/{a:24}",
        "api.slack.com/messaging/webhooks",
        "SLACK_WEBHOOK_URL",
    ),
    _f(
        "discord-webhook",
        "https://discord.com/api/webhooks/{d:19}/{w:68}",
        "discord.com/developers/docs/resources/webhook",
        "DISCORD_WEBHOOK_URL",
    ),
    _f(
        "zapier-webhook",
        "https://hooks.zapier.com/hooks/catch/{d:8}/{l:7}/",
        "help.zapier.com/hc/en-us/articles/8496288690317",
        "ZAPIER_HOOK_URL",
    ),
    _f(
        "teams-webhook",
        "https://myorg.webhook.office.com/webhookb2/{h:8}-{h:4}-{h:4}-{h:4}-{h:12}@{h:8}-{h:4}-{h:4}-{h:4}-{h:12}/IncomingWebhook/{h:32}/{h:8}-{h:4}-{h:4}-{h:4}-{h:12}",
        "learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook",
        "TEAMS_WEBHOOK_URL",
    ),
    _f(
        "dingtalk-webhook",
        "https://oapi.dingtalk.com/robot/send?access_token={h:64}",
        "open.dingtalk.com/document/robots/custom-robot-access",
        "DINGTALK_WEBHOOK",
    ),
    _f(
        "feishu-webhook",
        "https://open.feishu.cn/open-apis/bot/v2/hook/{h:8}-{h:4}-{h:4}-{h:4}-{h:12}",
        "open.feishu.cn/document/client-docs/bot-v3/add-custom-bot",
        "FEISHU_WEBHOOK",
    ),
    _f(
        "wecom-webhook",
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={h:8}-{h:4}-{h:4}-{h:4}-{h:12}",
        "developer.work.weixin.qq.com/document/path/91770",
        "WECOM_WEBHOOK",
    ),
    _f(
        "telegram-bot",
        "{d:10}:AA{w:33}",
        "core.telegram.org/bots/api#authorizing-your-bot",
        "TELEGRAM_BOT_TOKEN",
    ),
    _f(
        "sendgrid",
        "SG.{w:22}.{w:43}",
        "www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
        "SENDGRID_API_KEY",
    ),
    _f(
        "mailgun",
        "key-{h:32}",
        "documentation.mailgun.com/docs/mailgun/api-reference/authentication",
        "MAILGUN_API_KEY",
    ),
    _f(
        "mailchimp",
        "{h:32}-us{d:2}",
        "mailchimp.com/developer/marketing/guides/quick-start",
        "MAILCHIMP_API_KEY",
    ),
    _f(
        "resend",
        "re_{a:8}_{a:24}",
        "resend.com/docs/dashboard/api-keys/introduction",
        "RESEND_API_KEY",
    ),
    _f("figma", "figd_{w:40}", "www.figma.com/developers/api#access-tokens", "FIGMA_TOKEN"),
    _f(
        "contentful",
        "CFPAT-{w:43}",
        "www.contentful.com/developers/docs/references/authentication",
        "CONTENTFUL_MANAGEMENT_TOKEN",
    ),
    _f(
        "typeform",
        "tfp_{w:44}_{a:14}",
        "www.typeform.com/developers/get-started/personal-access-token",
        "TYPEFORM_TOKEN",
    ),
    _f(
        "posthog-personal",
        "phx_{a:47}",
        "posthog.com/docs/api#personal-api-keys",
        "POSTHOG_PERSONAL_API_KEY",
    ),
    _f(
        "linear",
        "lin_api_{a:40}",
        "linear.app/developers/graphql#personal-api-keys",
        "LINEAR_API_KEY",
    ),
    _f("notion", "ntn_{a:46}", "developers.notion.com/docs/authorization", "NOTION_TOKEN"),
    _f(
        "notion-legacy", "secret_{a:43}", "developers.notion.com/docs/authorization", "NOTION_TOKEN"
    ),
    _f(
        "airtable",
        "pat{a:14}.{h:64}",
        "airtable.com/developers/web/guides/personal-access-tokens",
        "AIRTABLE_TOKEN",
    ),
    _f("dropbox", "sl.{w:135}", "developers.dropbox.com/oauth-guide", "DROPBOX_TOKEN"),
    _f(
        "mapbox-secret",
        "sk.eyJ1Ijoi{a:20}In0.{w:22}",
        "docs.mapbox.com/accounts/guides/tokens",
        "MAPBOX_SECRET_TOKEN",
    ),
    _f(
        "clerk-secret",
        "sk_live_{a:40}",
        "clerk.com/docs/deployments/clerk-environment-variables",
        "CLERK_SECRET_KEY",
    ),
    _f(
        "twitter-bearer",
        "AAAAAAAAAAAAAAAAAAAAA{a:25}%3D{a:50}",
        "developer.x.com/en/docs/authentication/oauth-2-0/bearer-tokens",
        "TWITTER_BEARER_TOKEN",
    ),
    _f("age", "AGE-SECRET-KEY-1{u:58}", "age-encryption.org/v1 (X25519 identities)", "AGE_KEY"),
)


def _fill(template: str, rng: random.Random) -> str:
    def body(m: re.Match[str]) -> str:
        alphabet = ALPHABETS[m.group(1)]
        n = int(m.group(2))
        if m.group(1) in "ws":  # no token body begins or ends with a separator
            inner = "".join(rng.choice(alphabet) for _ in range(n))
            edge = ALPHABETS["a"]
            return rng.choice(edge) + inner[1:-1] + rng.choice(edge) if n > 1 else inner
        return "".join(rng.choice(alphabet) for _ in range(n))

    return re.sub(r"\{(\w):(\d+)\}", body, template)


class Case(NamedTuple):
    format: Format
    token: str


@lru_cache(maxsize=1)
def cases(per_format: int = 2) -> tuple[Case, ...]:
    """`per_format` generated tokens of every format (fixed seed: the same every run)."""
    out = []
    for fmt in FORMATS:
        rng = random.Random(f"gitpub-secret-formats/{fmt.name}")
        out += [Case(fmt, _fill(fmt.template, rng)) for _ in range(per_format)]
    return tuple(out)


Placement = Callable[[Case], str]

PLACEMENTS: dict[str, tuple[Placement, ...]] = {
    "bare": (lambda c: c.token,),
    "sentence": (
        lambda c: f"Here is the key I used yesterday: {c.token} and then it worked.",
        lambda c: f"I pasted it by mistake, the key was {c.token}.",
        lambda c: f"The deploy failed until we set the token ({c.token}) in the settings.",
    ),
    "chinese": (
        lambda c: f"我的令牌是{c.token}，请勿外传。",
        lambda c: f"把{c.token}填进配置文件里就可以了",
        lambda c: f"密钥：{c.token}。",
        lambda c: f"调用接口时带上「{c.token}」即可。",
    ),
    "assignment": (
        lambda c: f"{c.format.var}={c.token}",
        lambda c: f'{c.format.var.lower()} = "{c.token}"',
        lambda c: f"  {c.format.var.lower()}: {c.token}",
    ),
    "code": (
        lambda c: f'client = Client(api_key="{c.token}")',
        lambda c: f"const headers = {{ Authorization: `Bearer {c.token}` }};",
    ),
}


def rng_password(seed: str, n: int = 12) -> str:
    """A password as a person or a password manager makes one: letters of both cases,
    digits, a symbol, in no dictionary."""
    rng = random.Random(f"gitpub-passwords/{seed}")
    body = [rng.choice(string.ascii_letters + string.digits) for _ in range(n - 3)]
    body += [rng.choice(string.ascii_uppercase), rng.choice(string.digits), rng.choice("#%!")]
    rng.shuffle(body)
    return rng.choice(string.ascii_letters) + "".join(body)


def passwords() -> list[tuple[str, str]]:
    """(form, text) of real-looking passwords in the forms people paste them."""
    p = [rng_password(str(i)) for i in range(12)]
    q = [x.replace("#", "").replace("%", "").replace("!", "") for x in p]  # shell-safe
    return [
        ("unquoted assignment", f"password={q[0]}"),
        ("env assignment", f"DB_PASSWORD={q[1]}"),
        ("yaml", f"  password: {q[2]}"),
        ("mysql -p", f"mysql -u root -p{q[3]} -h 10.0.0.5 shop"),
        ("--password=", f"mysqldump --user=backup --password={q[4]} shop > shop.sql"),
        ("--password value", f"redis-cli -h cache.internal --pass {q[5]} ping"),
        ("url userinfo", f"postgresql://app:{q[6]}@db.internal:5432/app"),
        ("chinese sentence", f"数据库 root 密码是 {p[7]}，别告诉别人"),
        ("chinese label", f"服务器密码：{p[8]}"),
        ("chinese label glued", f"管理员口令={p[9]}。"),
        ("chinese key", f"密钥：{q[10]}"),
        ("quoted", f'password = "{p[11]}"'),
    ]


# Demo values real tutorials show (the list, quoted as the posts write them): none is
# a secret, and a post showing one must publish.
DEMOS = (
    "password: '123456'",
    '{"username":"admin","password":"a12345678"}',
    "    password: 'strapiPassword',",
    "DATABASE_URL=postgresql://myuser:mypassword@localhost:5432/mydb",
    "DATABASE_URL=postgresql://dev:dev@localhost:5432/app_dev",
    'DRUPAL_BASIC_USERNAME="editor"\nDRUPAL_BASIC_PASSWORD="editor"',
    'password = "654321"',
    "`psql {{postgresql://user:pass@localhost/mydb}}`",
    "NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_test_" + "Y2xlcmsuZXhhbXBsZS5jb20k",
    "STRIPE_PUBLISHABLE_KEY=pk_live_" + "51H" + "q" * 2 + "Lw8zR4tN6vB1cY3dF5gH7jK0",
    "The key file starts with `-----BEGIN PRIVATE KEY-----` and ends with the matching footer.",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "演示站点：https://demo.example.com 账号：admin 密码：123456",
    "复制这段口令：SPRING2024，打开淘宝即可领券",
    "mysql -u root -p123456",
    "mysql -uroot -ppassword",
    "redis-cli -a changeme",
    "password=changeme",
    "export API_KEY=sk_live_" + "x" * 24,
    "OPENAI_API_KEY=sk-" + "x" * 48,
    "api_key = 'your_api_key_here'",
    "SECRET_KEY=abc123efg456",
    "git clone http://admin:123456@myserver/test.git",
    "Authorization: Bearer YOUR_ACCESS_TOKEN",
    "Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=",
    "curl -u elastic:123456 https://localhost:9200",
    'password: "super_s3cr3t"',
    "postgres://postgres:postgres@localhost:5432/postgres",
)
