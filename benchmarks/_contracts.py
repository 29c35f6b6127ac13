"""Synthetic Chinese contracts with cited clauses, for ``bench_evidence.py``.

A contract is a title, the parties, and articles (``第N条 标题`` on a line of its own, then
numbered sub-clauses of one to three sentences ending with 。 or ；). Every sentence is drawn
from pools of templates per article heading and filled from pools of parties, goods, amounts (in
Arabic or Chinese numerals), periods, rates, dates and places, so the sentences of one contract
share many characters, as real contracts do. Each record cites five clauses (the ``kind`` key of
each evidence item says which; pingce ignores it):

=============  =====================================================================
``verbatim``   a whole sentence of the contract, as written
``fragment``   the part of a sentence after or before its first comma, whichever is
               at least half of it (no comma: its first two thirds)
``span``       two adjacent sentences of one sub-clause, the first one's end mark
               replaced by "，" (so not verbatim: it needs the backend)
``altered``    a sentence lightly paraphrased, with one number or the parties changed
``invented``   half the records: a clause from a pool of terms no contract here has;
``copied``     the other half: a sentence of the previous record's contract
=============  =====================================================================

Records are drawn one by one from ``random.Random(seed * 1_000_003 + i)``, so the first
records of a larger file are the records of a smaller one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["KINDS", "contract_records"]

KINDS = ("verbatim", "fragment", "span", "altered", "invented", "copied")
LEVELS = ("高", "中", "低")

_DIGITS = "零一二三四五六七八九"
_CAPITAL = "零壹贰叁肆伍陆柒捌玖"
_CITIES = ["北京", "上海", "深圳", "杭州", "成都", "武汉", "南京", "西安", "苏州", "天津", "重庆"]
_CITIES += ["广州", "长沙", "青岛", "厦门", "合肥", "郑州", "济南"]
_NAMES = ["华信", "明远", "恒达", "瑞丰", "新元", "博通", "中科", "安泰", "宏图", "天成", "金诚"]
_NAMES += ["长风", "智云", "汇通", "鼎盛", "卓越", "嘉禾", "同创", "远航", "聚源"]
_TRADES = ["科技", "贸易", "建设", "信息技术", "物流", "实业", "咨询", "置业", "网络科技", "机械"]
_TYPES: dict[str, tuple[str, str, list[str]]] = {
    "买卖合同": ("买受人", "出卖人", ["办公设备", "服务器", "钢材", "建筑材料", "医疗器械"]),
    "租赁合同": ("承租人", "出租人", ["办公用房", "仓储场地", "生产厂房", "商铺", "车辆"]),
    "技术服务合同": ("甲方", "乙方", ["信息系统运维服务", "软件开发服务", "数据分析服务"]),
    "劳动合同": ("用人单位", "劳动者", ["销售岗位工作", "研发岗位工作", "行政岗位工作"]),
    "借款合同": ("借款人", "贷款人", ["流动资金", "项目建设资金", "设备采购资金"]),
    "建设工程施工合同": ("发包人", "承包人", ["办公楼主体工程", "厂房改造工程", "道路工程"]),
    "委托合同": ("委托人", "受托人", ["商标代理事务", "市场调研事务", "采购代理事务"]),
}

# {A}, {B}: the two roles; {item}; {amount}, {small}: amounts; {days}, {months}: periods;
# {rate}: a rate; {date}; {city}; {copies}
_ARTICLES: dict[str, list[str]] = {
    "合同标的": [
        "{B}同意按照本合同约定向{A}提供{item}，{A}同意按照本合同约定支付相应价款。",
        "{item}的具体内容、规格及数量以双方签字确认的附件为准。",
        "{B}应当保证其提供的{item}符合国家标准及行业标准的要求；",
        "本合同项下{item}的实施地点为{city}市，{B}不得擅自变更实施地点。",
        "未经{A}书面同意，{B}不得将本合同项下的全部或部分义务转让给第三方。",
        "{B}应指定专人负责本合同的履行，并将联系人及联系方式书面告知{A}。",
        "{A}应为{B}履行本合同提供必要的协助和便利条件；",
    ],
    "价款与支付": [
        "本合同总价款为{amount}，该价款已包含税费、运输费及其他一切费用。",
        "{A}应于本合同签订之日起{days}内向{B}支付合同总价款的{rate}作为预付款。",
        "{B}完成全部义务并经{A}验收合格后{days}内，{A}支付剩余价款{small}。",
        "{B}应在收到每期款项前向{A}开具等额的增值税专用发票；",
        "{A}逾期付款的，每逾期一日应按未付金额的{rate}向{B}支付违约金。",
        "双方确认{B}的收款账户开户行为{city}分行，账户名称与{B}名称一致。",
        "合同履行期间价款不作调整，但因{A}要求变更工作内容的除外。",
        "{A}有权在支付前扣除{B}依本合同应付的违约金及赔偿金。",
    ],
    "履行期限": [
        "{B}应于{date}前完成本合同项下的全部工作。",
        "{B}应在收到{A}书面通知后{days}内开始履行，履行期限为{months}。",
        "因{A}原因导致工期延误的，履行期限相应顺延，{B}不承担延误责任；",
        "{B}预计不能按期履行的，应当提前{days}书面通知{A}并说明理由。",
        "本合同有效期自{date}起至双方义务履行完毕之日止。",
        "{B}应每{days}向{A}书面报告一次履行进度；",
    ],
    "验收": [
        "{A}应在{B}交付后{days}内组织验收，并出具书面验收意见。",
        "{A}逾期未提出书面异议的，视为验收合格；",
        "验收不合格的，{B}应在{days}内免费整改并重新提交验收。",
        "经两次验收仍不合格的，{A}有权解除本合同并要求{B}返还已付款项。",
        "验收合格不免除{B}对隐蔽瑕疵应承担的责任。",
        "验收所需的检测费用由{B}承担，但检测结果合格的除外。",
    ],
    "质量保证": [
        "{B}保证所提供的{item}不存在任何权利瑕疵及质量缺陷。",
        "质量保证期为验收合格之日起{months}，保证期内{B}应免费维修。",
        "{B}应在接到{A}维修通知后{days}内到达现场处理；",
        "因质量问题给{A}造成损失的，{B}应当承担全部赔偿责任。",
        "质量保证金为合同总价款的{rate}，保证期满后{days}内无息退还。",
    ],
    "保密条款": [
        "双方对在履行本合同过程中知悉的对方商业秘密负有保密义务。",
        "未经对方书面同意，任何一方不得向第三方披露本合同的内容；",
        "保密义务不因本合同的解除或终止而失效，保密期限为{months}。",
        "违反保密义务的一方应向对方支付违约金{small}，并赔偿由此造成的损失。",
    ],
    "知识产权": [
        "{B}在履行本合同过程中形成的工作成果，其知识产权归{A}所有。",
        "{B}保证其提供的{item}不侵犯任何第三方的知识产权；",
        "因侵犯第三方知识产权引起的纠纷，由{B}负责处理并承担全部费用。",
        "未经{A}许可，{B}不得将工作成果用于本合同以外的目的。",
    ],
    "违约责任": [
        "{B}逾期履行的，每逾期一日应向{A}支付合同总价款{rate}的违约金。",
        "{B}逾期超过{days}的，{A}有权解除本合同，{B}应返还已收款项并支付违约金{small}。",
        "任何一方违反本合同约定给对方造成损失的，应当赔偿对方的全部损失；",
        "违约金不足以弥补损失的，守约方有权要求违约方继续赔偿。",
        "{A}无正当理由拒绝验收的，应向{B}支付合同总价款{rate}的违约金。",
        "违约金的累计金额不超过合同总价款的{rate}。",
        "{B}未按约定提供{item}的，{A}有权另行委托第三方，所需费用由{B}承担。",
    ],
    "合同解除": [
        "经双方协商一致，可以书面形式解除本合同。",
        "{B}严重违约经{A}催告后{days}内仍未改正的，{A}有权单方解除本合同。",
        "一方依约解除合同的，应当以书面形式通知对方，通知到达对方时合同解除；",
        "合同解除后，双方应在{days}内完成结算，已履行部分按实际完成量结算。",
        "合同解除不影响守约方要求违约方承担违约责任的权利。",
    ],
    "不可抗力": [
        "因不可抗力不能履行合同的，根据不可抗力的影响，部分或者全部免除责任。",
        "遭受不可抗力的一方应在事件发生后{days}内书面通知对方，并提供相关证明；",
        "不可抗力持续超过{months}的，任何一方均有权解除本合同。",
        "一方迟延履行后发生不可抗力的，不免除其违约责任。",
    ],
    "争议解决": [
        "因本合同引起的争议，双方应友好协商解决。",
        "协商不成的，任何一方均可向{city}市有管辖权的人民法院提起诉讼；",
        "争议解决期间，除争议事项外，双方应继续履行本合同的其他条款。",
        "败诉方应承担胜诉方因诉讼支出的律师费、诉讼费及保全费用。",
    ],
    "通知与送达": [
        "本合同项下的通知应以书面形式送达对方在本合同首部载明的地址。",
        "一方变更通知地址的，应在变更后{days}内书面通知对方；",
        "以快递方式发出的通知，自交邮之日起第{n}日视为送达。",
    ],
    "其他": [
        "本合同未尽事宜，由双方另行签订补充协议，补充协议与本合同具有同等法律效力。",
        "本合同自双方签字盖章之日起生效。",
        "本合同一式{copies}份，双方各执{half}份，具有同等法律效力。",
        "本合同的附件为本合同不可分割的组成部分；",
    ],
}
_INVENTED = [
    "{A}须对{B}员工在履行期间发生的工伤事故承担全部赔偿责任。",
    "{B}放弃因本合同产生的一切诉讼权利，争议由{A}单方指定的机构裁决。",
    "本合同期满后自动续期十年，任何一方不得提前终止。",
    "{A}有权随时单方调整合同价款而无需征得{B}同意。",
    "{B}应无条件承担{A}的全部经营亏损。",
    "任何情况下{A}均不承担违约责任，{B}承担一切风险。",
    "{B}须以其全部个人财产为本合同的履行提供无限连带担保。",
    "双方同意本合同适用境外法律并由境外仲裁机构裁决。",
    "{A}可将{B}的个人信息提供给任何第三方用于商业推广。",
    "{B}在合同终止后二十年内不得从事任何相同或类似业务。",
]
# per contract, each pair's second spelling replaces the first with probability one half (the
# drafting habits of one contract, kept through all its sentences)
_STYLES = [
    ("本合同", "本协议"),
    ("违约金", "违约赔偿金"),
    ("书面通知", "以书面形式通知"),
    ("第三方", "任何第三人"),
    ("应当", "应"),
    ("全部损失", "全部经济损失"),
]
_PARAPHRASE = [
    ("应当", "应"),
    ("之日起", "后"),
    ("本合同", "该合同"),
    ("书面", "以书面方式"),
    ("承担", "负担"),
    ("支付", "付清"),
    ("有权", "可以"),
    ("全部", "所有"),
]


def _cn_number(n: int, capital: bool = False) -> str:
    """A positive integer below 100,000,000 in Chinese numerals (十五, 二十万, 壹拾贰万)."""
    digits = _CAPITAL if capital else _DIGITS
    units = ["", "拾", "佰", "仟"] if capital else ["", "十", "百", "千"]

    def below_10k(m: int) -> str:
        out, zero = "", False
        for power in (3, 2, 1, 0):
            d = m // 10**power % 10
            if d:
                if zero and out:
                    out += digits[0]
                out += digits[d] + units[power]
                zero = False
            elif out:
                zero = True
        return out

    high, low = divmod(n, 10_000)
    text = (below_10k(high) + ("万" if high else "")) if high else ""
    if low:
        text += (digits[0] if high and low < 1000 else "") + below_10k(low)
    if not capital and text.startswith("一十"):
        text = text[1:]
    return text


def _amount(rng: random.Random, low: int, high: int) -> str:
    value = rng.randrange(low, high) * 1000
    style = rng.random()
    if style < 0.3:
        return f"人民币{_cn_number(value // 10_000)}万元" if value % 10_000 == 0 else f"{value:,}元"
    if style < 0.5:
        return f"人民币{_cn_number(value, capital=True)}元"
    if style < 0.75:
        return f"人民币{value:,}元"
    return f"{value / 10_000:g}万元"


def _days(rng: random.Random) -> str:
    n = rng.choice([3, 5, 7, 10, 15, 20, 30, 45, 60, 90])
    unit = rng.choice(["日", "日", "个工作日", "天"])
    return f"{n}{unit}" if rng.random() < 0.4 else f"{_cn_number(n)}{unit}"


def _months(rng: random.Random) -> str:
    n = rng.choice([3, 6, 12, 18, 24, 36])
    return f"{n}个月" if rng.random() < 0.4 else f"{_cn_number(n)}个月"


def _rate(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.35:
        return f"百分之{_cn_number(rng.choice([5, 10, 20, 30]))}"
    if roll < 0.55:
        return f"千分之{_cn_number(rng.choice([1, 3, 5]))}"
    return f"{rng.choice([0.05, 0.1, 0.3, 0.5, 5, 10, 20, 30]):g}%"


def _date(rng: random.Random) -> str:
    year, month, day = rng.choice([2024, 2025, 2026]), rng.randint(1, 12), rng.randint(1, 28)
    if rng.random() < 0.6:
        return f"{year}年{month}月{day}日"
    year_cn = "".join(_DIGITS[int(d)].replace("零", "〇") for d in str(year))
    return f"{year_cn}年{_cn_number(month)}月{_cn_number(day)}日"


def _fill(
    template: str,
    rng: random.Random,
    roles: tuple[str, str],
    item: str,
    style: tuple[tuple[str, str], ...] = (),
) -> str:
    copies = rng.choice([2, 4, 6])
    values = {
        "A": roles[0],
        "B": roles[1],
        "item": item,
        "city": rng.choice(_CITIES),
        "copies": _cn_number(copies),
        "half": _cn_number(copies // 2),
        "n": _cn_number(rng.choice([3, 5, 7])),
    }
    # only the slots a template has are drawn (the order of draws is part of the seed)
    for name, make in (
        ("amount", lambda: _amount(rng, 100, 5000)),
        ("small", lambda: _amount(rng, 5, 200)),
        ("days", lambda: _days(rng)),
        ("months", lambda: _months(rng)),
        ("rate", lambda: _rate(rng)),
        ("date", lambda: _date(rng)),
    ):
        if "{" + name + "}" in template:
            values[name] = make()
    text = template.format(**values)
    for old, new in style:
        text = text.replace(old, new)
    return text


def _company(rng: random.Random) -> str:
    return f"{rng.choice(_CITIES)}{rng.choice(_NAMES)}{rng.choice(_TRADES)}有限公司"


def _contract(rng: random.Random, target: int) -> tuple[str, str, list[list[str]]]:
    """(type, text, sub-clauses as lists of sentences) of one contract of about ``target``
    characters. A template is used once per contract while any heading has one left."""
    kind = rng.choice(list(_TYPES))
    first, second, items = _TYPES[kind]
    roles = (first, second)
    item = rng.choice(items)
    style = tuple(pair for pair in _STYLES if rng.random() < 0.5)
    lines = [
        f"{item}{kind}",
        f"{first}：{_company(rng)}，住所地：{rng.choice(_CITIES)}市{rng.choice(_NAMES)}路"
        f"{rng.randint(1, 999)}号。",
        f"{second}：{_company(rng)}，法定代表人：{rng.choice('王李张刘陈杨赵黄周吴')}某。",
        f"{first}与{second}根据《中华人民共和国民法典》及相关法律法规的规定，在平等、自愿、"
        "公平、诚实信用的基础上，经友好协商，就相关事宜订立本合同。",
    ]
    length = sum(len(line) + 1 for line in lines)
    left = {title: rng.sample(pool, len(pool)) for title, pool in _ARTICLES.items()}
    titles = list(_ARTICLES)
    clauses: list[list[str]] = []
    number = 0
    while length < target:
        number += 1
        title = titles[number - 1] if number <= len(titles) else rng.choice(titles)
        if not left[title]:
            title = max(titles, key=lambda t: len(left[t]))
            if not left[title]:
                left = {t: rng.sample(pool, len(pool)) for t, pool in _ARTICLES.items()}
        heading = f"第{_cn_number(number)}条 {title}"
        lines.append(heading)
        length += len(heading) + 1
        for k in range(1, rng.randint(2, 3) + 1):
            templates = [left[title].pop() for _ in range(min(len(left[title]), rng.randint(1, 3)))]
            if not templates:
                break
            sentences = [_fill(t, rng, roles, item, style) for t in templates]
            # a sub-clause's sentences end with 。 or ；, its last one with 。
            sentences[-1] = sentences[-1][:-1] + "。"
            lines.append(f"{number}.{k} " + "".join(sentences))
            length += len(lines[-1]) + 1
            clauses.append(sentences)
            if length >= target:
                break
    return kind, "\n".join(lines), clauses


_NUMBER = re.compile(
    r"(?<!第)(?:[0-9][0-9,.]*|[一二三四五六七八九十百千万两壹贰叁肆伍陆柒捌玖拾佰仟]+)"
)


def _numbers(text: str) -> list[re.Match[str]]:
    """The numbers of ``text`` followed by a unit (日, 天, 个月, 元, 万元, %, 年)."""
    return [
        m
        for m in _NUMBER.finditer(text)
        if m.end() < len(text) and text[m.end()] in "日天个月元万%年" and m.group() != "万"
    ]


def _altered(text: str, rng: random.Random, roles: tuple[str, str]) -> str:
    """``text`` lightly paraphrased (one phrase reworded), with one of its numbers changed or,
    when it has none, its parties swapped (or its one party replaced by the other)."""
    for old, new in rng.sample(_PARAPHRASE, len(_PARAPHRASE)):
        if old in text:
            text = text.replace(old, new, 1)
            break
    numbers = _numbers(text)
    if numbers:
        m = rng.choice(numbers)
        old = m.group()
        if old[0].isdigit():
            value = (
                float(old.replace(",", ""))
                if old.replace(",", "").replace(".", "").isdigit()
                else 1.0
            )
            new = f"{value * rng.choice([2, 3, 10]):g}"
        else:
            new = (
                "六"
                if old in ("两", "八")
                else rng.choice(["两", "八", "十二", "二十五", "九十九"])
            )
        return text[: m.start()] + new + text[m.end() :]
    a, b = roles
    if a in text and b in text:
        return text.replace(a, "\0").replace(b, a).replace("\0", b)
    return text.replace(a, b) if a in text else text.replace(b, a)


def contract_records(n: int, seed: int = 0, target: int = 3000) -> Iterator[dict[str, Any]]:
    """``n`` seeded contract-risk records with a contract of about ``target`` characters and five
    cited clauses each (see the module docstring)."""
    from _data import risk_labels

    gold, pred, latency = risk_labels(n, seed)
    previous: list[str] = []
    for i in range(n):
        rng = random.Random(seed * 1_000_003 + i)
        kind, text, clauses = _contract(rng, int(target * rng.uniform(0.9, 1.1)))
        roles = _TYPES[kind][:2]
        sentences = [s for clause in clauses for s in clause]
        verbatim, body = rng.sample(sentences, 2)
        comma = body.find("，")
        if 0 < comma < len(body) / 2:  # after the first comma
            fragment = body[comma + 1 :]
        elif comma > 0:  # up to it
            fragment = body[:comma]
        else:  # the first two thirds
            fragment = body[: 2 * len(body) // 3]
        chosen = rng.choice([c for c in clauses if len(c) >= 2])
        j = rng.randrange(len(chosen) - 1)
        span = chosen[j][:-1] + "，" + chosen[j + 1]
        detailed = [s for s in sentences if _numbers(s) or any(r in s for r in roles)]
        altered = _altered(rng.choice(detailed or sentences), rng, roles)
        if i % 2 == 0 or not previous:
            last_kind, last = "invented", _fill(rng.choice(_INVENTED), rng, roles, "")
        else:
            last_kind, last = "copied", rng.choice(previous)
        previous = sentences
        yield {
            "id": f"c{i}",
            "contract_type": kind,
            "gold_level": LEVELS[int(gold[i])],
            "pred_level": LEVELS[int(pred[i])],
            "latency_sec": float(latency[i]),
            "contract": text,
            "evidence": [
                {"clause": verbatim, "kind": "verbatim"},
                {"clause": fragment, "kind": "fragment"},
                {"clause": span, "kind": "span"},
                {"clause": altered, "kind": "altered"},
                {"clause": last, "kind": last_kind},
            ],
        }
