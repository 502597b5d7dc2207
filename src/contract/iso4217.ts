/**
 * ISO 4217 currency codes, kept as data (contract revision 3 change 8): a cost's currency is valid
 * when it is on one of these lists, never by what the JavaScript runtime's Intl knows, so no result
 * changes with the Node version.
 *
 * Source: the ISO 4217 maintenance agency (SIX Financial Information, on behalf of ISO), List One
 * "Current currency & funds code list" and List Three "Historic denominations", both published
 * 2026-01-01 (list-one.xml and list-three.xml, Pblshd="2026-01-01": XCG and XAD current, ANG and
 * BGN withdrawn). The codes were taken from the consolidation of both lists in
 * github.com/datasets/currency-codes (data/codes-all.csv, refreshed 2026-02-01). Codes only;
 * updating means replacing both lists and ISO_4217_PUBLISHED.
 */

/** The publication date of both lists. */
export const ISO_4217_PUBLISHED = "2026-01-01";

/** List One: current currency, fund (e.g. CLF, USN) and precious-metal (e.g. XAU) codes, 178 codes. */
const LIST_ONE = [
  "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BHD", "BIF", "BMD", "BND",
  "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY",
  "COP", "COU", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP",
  "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD",
  "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP",
  "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN",
  "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN",
  "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD",
  "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX",
  "USD", "USN", "UYI", "UYU", "UYW", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAD", "XAF", "XAG", "XAU", "XBA",
  "XBB", "XBC", "XBD", "XCD", "XCG", "XDR", "XOF", "XPD", "XPF", "XPT", "XSU", "XTS", "XUA", "XXX", "YER", "ZAR",
  "ZMW", "ZWG",
] as const;

/**
 * List Three: withdrawn codes not on List One (e.g. HRK, ANG), 129 codes; a cost reported
 * before the withdrawal keeps a valid currency.
 */
const LIST_THREE = [
  "ADP", "AFA", "ALK", "ANG", "AOK", "AON", "AOR", "ARA", "ARP", "ARY", "ATS", "AYM", "AZM", "BAD", "BEC", "BEF",
  "BEL", "BGJ", "BGK", "BGL", "BGN", "BOP", "BRB", "BRC", "BRE", "BRN", "BRR", "BUK", "BYB", "BYR", "CHC", "CSD",
  "CSJ", "CSK", "CUC", "CYP", "DDM", "DEM", "ECS", "ECV", "EEK", "ESA", "ESB", "ESP", "FIM", "FRF", "GEK", "GHC",
  "GHP", "GNE", "GNS", "GQE", "GRD", "GWE", "GWP", "HRD", "HRK", "IEP", "ILP", "ILR", "ISJ", "ITL", "LAJ", "LSM",
  "LTL", "LTT", "LUC", "LUF", "LUL", "LVL", "LVR", "MGF", "MLF", "MRO", "MTL", "MTP", "MVQ", "MXP", "MZE", "MZM",
  "NIC", "NLG", "PEH", "PEI", "PES", "PLZ", "PTE", "RHD", "ROK", "ROL", "RUR", "SDD", "SDP", "SIT", "SKK", "SLL",
  "SRG", "STD", "SUR", "TJR", "TMM", "TPE", "TRL", "UAK", "UGS", "UGW", "USS", "UYN", "UYP", "VEB", "VEF", "VNC",
  "XEU", "XFO", "XFU", "XRE", "YDD", "YUD", "YUM", "YUN", "ZAL", "ZMK", "ZRN", "ZRZ", "ZWC", "ZWD", "ZWL", "ZWN",
  "ZWR",
] as const;

const CODES: ReadonlySet<string> = new Set<string>([...LIST_ONE, ...LIST_THREE]);

/** True for a code of List One or List Three, spelled exactly (three upper-case letters). */
export function isIso4217Code(code: string): boolean {
  return CODES.has(code);
}
