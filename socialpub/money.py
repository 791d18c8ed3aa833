"""Money (cross-cutting): an amount is an integer of the currency's minor units (cents)
and its ISO 4217 code, as DESIGN.md section 1 says. This is the one list of the
currencies the service takes and of their minor units.

The list is ISO 4217's circulating currencies (the 2025 list, less those since
withdrawn: BGN, as Bulgaria adopted the euro on 2026-01-01, and ANG, replaced by XCG).
Fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), precious metals, bond
units, XDR, XSU, XUA and the testing codes (XTS, XXX) are not money anyone is paid
in, and are refused."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

# Currencies whose minor unit is not a hundredth: their exponent (JPY has no minor
# unit, BHD has thousandths).
_EXPONENTS = {
    "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
    "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
    "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

_CODES = """
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS
GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW
KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR
MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR
SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX
USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
"""

# ISO 4217 code -> the number of decimal places of its minor unit.
CURRENCIES: dict[str, int] = {code: _EXPONENTS.get(code, 2) for code in _CODES.split()}

# The largest amount taken, in minor units: an integer every JSON parser reads exactly
# (2^53 - 1), far beyond any real payment.
MAX_AMOUNT = 2**53 - 1


def is_currency(code) -> bool:
    return isinstance(code, str) and code in CURRENCIES


def minor_units(currency: str) -> int:
    """How many decimal places the currency's minor unit has (2 for EUR, 0 for JPY)."""
    return CURRENCIES[currency]


def format_amount(amount: int, currency: str) -> str:
    """`5000, "EUR"` as `50.00 EUR`, `5000, "JPY"` as `5000 JPY` (for people: the CLI
    and the dashboard)."""
    places = CURRENCIES.get(currency, 2)
    if places == 0:
        return f"{amount} {currency}"
    sign = "-" if amount < 0 else ""
    whole, fraction = divmod(abs(amount), 10 ** places)
    return f"{sign}{whole}.{fraction:0{places}d} {currency}"


def split(amount: int, parts: int) -> list[int]:
    """`amount` shared into `parts` whole minor units that add up to it exactly: equal
    shares, the remainder's units going one each to the first parts."""
    if parts <= 0:
        return []
    share, left = divmod(amount, parts)
    return [share + (1 if index < left else 0) for index in range(parts)]


def parse_amount(text: str, currency: str) -> int:
    """An amount written for people (`50`, `50.5`, `1,250.00`) in the currency's minor
    units (`5050` for EUR); ValueError for one that is not a number, is negative, or
    has more decimals than the currency's minor unit."""
    cleaned = (text or "").strip().replace(",", "").replace(" ", "")
    places = CURRENCIES.get(currency, 2)
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not an amount") from None
    if not value.is_finite() or value < 0:
        raise ValueError(f"{text!r} is not an amount")
    minor = value * (10 ** places)
    if minor != minor.to_integral_value():
        raise ValueError(f"{currency} has {places} decimal places" if places else f"{currency} has no decimal places")
    return int(minor)
