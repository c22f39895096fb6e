"""Sentences in 17 languages for generated web pages (profiler.testing.synthetic_warc).

The same six news sentences in each language (a council meeting, library hours, visitors, a
museum, a reading programme, the weather), written for these tests; keys are ISO 639-3.
Pages built from four or more of them are long enough for a detector to place reliably;
``TAGS`` are BCP 47 tags (and older forms) pages use to declare each language.
"""

SENTENCES = {
    "eng": (
        "The city council met on Tuesday evening to discuss the new budget for public libraries.",
        "Many residents said that the opening hours should be longer during the summer holidays.",
        "According to the report, the number of visitors has grown steadily over the last five years.",
        "The museum will host a new exhibition about the history of printing next spring.",
        "Local schools have started a reading programme that brings children and authors together.",
        "Weather forecasters expect heavy rain and strong winds along the coast this weekend.",
    ),
    "fra": (
        "Le conseil municipal s'est réuni mardi soir pour discuter du nouveau budget des bibliothèques.",
        "De nombreux habitants souhaitent que les horaires d'ouverture soient prolongés pendant l'été.",
        "Selon le rapport, le nombre de visiteurs a augmenté régulièrement au cours des cinq dernières années.",
        "Le musée accueillera au printemps prochain une exposition sur l'histoire de l'imprimerie.",
        "Les écoles de la ville ont lancé un programme de lecture qui réunit les enfants et les auteurs.",
        "Les prévisionnistes annoncent de fortes pluies et des vents violents sur la côte ce week-end.",
    ),
    "deu": (
        "Der Stadtrat hat sich am Dienstagabend getroffen, um über den neuen Haushalt der Bibliotheken zu beraten.",
        "Viele Einwohner wünschen sich längere Öffnungszeiten während der Sommerferien.",
        "Laut dem Bericht ist die Zahl der Besucher in den letzten fünf Jahren stetig gestiegen.",
        "Das Museum zeigt im nächsten Frühjahr eine neue Ausstellung über die Geschichte des Buchdrucks.",
        "Die Schulen der Stadt haben ein Leseprogramm gestartet, das Kinder und Autoren zusammenbringt.",
        "Die Wetterdienste erwarten am Wochenende starken Regen und heftigen Wind an der Küste.",
    ),
    "spa": (
        "El ayuntamiento se reunió el martes por la noche para debatir el nuevo presupuesto de las bibliotecas.",
        "Muchos vecinos piden que el horario de apertura sea más amplio durante las vacaciones de verano.",
        "Según el informe, el número de visitantes ha crecido de forma constante en los últimos cinco años.",
        "El museo acogerá la próxima primavera una exposición sobre la historia de la imprenta.",
        "Los colegios de la ciudad han puesto en marcha un programa de lectura que reúne a niños y escritores.",
        "Los meteorólogos prevén lluvias intensas y fuertes vientos en la costa este fin de semana.",
    ),
    "ita": (
        "Il consiglio comunale si è riunito martedì sera per discutere il nuovo bilancio delle biblioteche.",
        "Molti cittadini chiedono che l'orario di apertura sia più lungo durante le vacanze estive.",
        "Secondo il rapporto, il numero dei visitatori è cresciuto costantemente negli ultimi cinque anni.",
        "Il museo ospiterà la prossima primavera una mostra sulla storia della stampa.",
        "Le scuole della città hanno avviato un programma di lettura che fa incontrare bambini e scrittori.",
        "I meteorologi prevedono piogge abbondanti e forti venti lungo la costa questo fine settimana.",
    ),
    "por": (
        "A câmara municipal reuniu-se na terça-feira à noite para discutir o novo orçamento das bibliotecas.",
        "Muitos moradores pedem que o horário de funcionamento seja mais longo durante as férias de verão.",
        "Segundo o relatório, o número de visitantes cresceu de forma constante nos últimos cinco anos.",
        "O museu vai receber na próxima primavera uma exposição sobre a história da imprensa.",
        "As escolas da cidade lançaram um programa de leitura que junta crianças e escritores.",
        "Os meteorologistas esperam chuva forte e ventos intensos no litoral neste fim de semana.",
    ),
    "nld": (
        "De gemeenteraad kwam dinsdagavond bijeen om de nieuwe begroting voor de bibliotheken te bespreken.",
        "Veel inwoners willen dat de openingstijden in de zomervakantie langer worden.",
        "Volgens het rapport is het aantal bezoekers de afgelopen vijf jaar gestaag gegroeid.",
        "Het museum opent volgend voorjaar een nieuwe tentoonstelling over de geschiedenis van de boekdrukkunst.",
        "De scholen in de stad zijn een leesprogramma begonnen dat kinderen en schrijvers samenbrengt.",
        "Weerkundigen verwachten dit weekend zware regen en harde wind langs de kust.",
    ),
    "pol": (
        "Rada miasta zebrała się we wtorek wieczorem, aby omówić nowy budżet bibliotek publicznych.",
        "Wielu mieszkańców chce, aby w czasie wakacji biblioteki były otwarte dłużej.",
        "Według raportu liczba odwiedzających systematycznie rosła przez ostatnie pięć lat.",
        "Muzeum przygotowuje na przyszłą wiosnę nową wystawę o historii druku.",
        "Szkoły w mieście rozpoczęły program czytelniczy, który łączy dzieci i pisarzy.",
        "Synoptycy zapowiadają na weekend ulewne deszcze i silny wiatr na wybrzeżu.",
    ),
    "rus": (
        "Городской совет собрался во вторник вечером, чтобы обсудить новый бюджет публичных библиотек.",
        "Многие жители хотят, чтобы во время летних каникул библиотеки работали дольше.",
        "Согласно отчёту, число посетителей постоянно росло в течение последних пяти лет.",
        "Следующей весной музей откроет новую выставку об истории книгопечатания.",
        "Городские школы начали программу чтения, которая объединяет детей и писателей.",
        "Синоптики ожидают в выходные сильные дожди и штормовой ветер на побережье.",
    ),
    "tur": (
        "Belediye meclisi salı akşamı halk kütüphanelerinin yeni bütçesini görüşmek için toplandı.",
        "Birçok vatandaş yaz tatilinde kütüphanelerin daha uzun süre açık kalmasını istiyor.",
        "Rapora göre ziyaretçi sayısı son beş yılda düzenli olarak arttı.",
        "Müze gelecek ilkbaharda matbaanın tarihi hakkında yeni bir sergi açacak.",
        "Şehirdeki okullar çocukları ve yazarları bir araya getiren bir okuma programı başlattı.",
        "Meteoroloji uzmanları hafta sonu kıyıda şiddetli yağmur ve kuvvetli rüzgar bekliyor.",
    ),
    "swe": (
        "Kommunfullmäktige samlades på tisdagskvällen för att diskutera bibliotekens nya budget.",
        "Många invånare vill att biblioteken ska ha längre öppettider under sommarlovet.",
        "Enligt rapporten har antalet besökare ökat stadigt under de senaste fem åren.",
        "Museet öppnar nästa vår en ny utställning om boktryckarkonstens historia.",
        "Skolorna i staden har startat ett läsprojekt som för samman barn och författare.",
        "Meteorologerna väntar sig kraftigt regn och hårda vindar längs kusten i helgen.",
    ),
    "ara": (
        "اجتمع مجلس المدينة مساء الثلاثاء لمناقشة الميزانية الجديدة للمكتبات العامة.",
        "طالب كثير من السكان بتمديد ساعات العمل خلال العطلة الصيفية.",
        "وفقا للتقرير، ازداد عدد الزوار بشكل مستمر خلال السنوات الخمس الماضية.",
        "سيستضيف المتحف في الربيع المقبل معرضا جديدا عن تاريخ الطباعة.",
        "أطلقت مدارس المدينة برنامجا للقراءة يجمع بين الأطفال والكتاب.",
        "يتوقع خبراء الأرصاد أمطارا غزيرة ورياحا قوية على الساحل في نهاية هذا الأسبوع.",
    ),
    "zho": (
        "市议会星期二晚上召开会议，讨论公共图书馆的新预算。",
        "许多居民希望图书馆在暑假期间延长开放时间。",
        "根据报告，过去五年来访人数一直在稳步增长。",
        "博物馆将于明年春天举办一个关于印刷历史的新展览。",
        "本市的学校启动了一个阅读项目，让孩子们和作家见面交流。",
        "气象部门预计本周末沿海地区将有大雨和强风。",
    ),
    "jpn": (
        "市議会は火曜日の夜に会合を開き、公共図書館の新しい予算について話し合った。",
        "多くの住民は、夏休みの間は図書館の開館時間を延ばしてほしいと考えている。",
        "報告書によると、来館者の数はこの五年間で着実に増えている。",
        "博物館は来年の春、印刷の歴史に関する新しい展覧会を開く予定だ。",
        "市内の学校は、子どもたちと作家が出会える読書プログラムを始めた。",
        "気象予報士は、今週末は沿岸部で大雨と強風になると予想している。",
    ),
    "ell": (
        "Το δημοτικό συμβούλιο συνεδρίασε την Τρίτη το βράδυ για να συζητήσει τον νέο προϋπολογισμό των βιβλιοθηκών.",
        "Πολλοί κάτοικοι ζητούν να μένουν οι βιβλιοθήκες ανοιχτές περισσότερες ώρες το καλοκαίρι.",
        "Σύμφωνα με την έκθεση, ο αριθμός των επισκεπτών αυξάνεται σταθερά τα τελευταία πέντε χρόνια.",
        "Το μουσείο θα φιλοξενήσει την επόμενη άνοιξη μια νέα έκθεση για την ιστορία της τυπογραφίας.",
        "Τα σχολεία της πόλης ξεκίνησαν ένα πρόγραμμα ανάγνωσης που φέρνει κοντά παιδιά και συγγραφείς.",
        "Οι μετεωρολόγοι προβλέπουν ισχυρές βροχές και δυνατούς ανέμους στις ακτές αυτό το Σαββατοκύριακο.",
    ),
    "heb": (
        "מועצת העיר התכנסה ביום שלישי בערב כדי לדון בתקציב החדש של הספריות הציבוריות.",
        "תושבים רבים מבקשים שהספריות יהיו פתוחות יותר שעות בחופשת הקיץ.",
        "לפי הדוח, מספר המבקרים גדל בהתמדה בחמש השנים האחרונות.",
        "המוזיאון יציג באביב הבא תערוכה חדשה על תולדות הדפוס.",
        "בתי הספר בעיר פתחו תוכנית קריאה שמפגישה בין ילדים לסופרים.",
        "החזאים צופים גשם כבד ורוחות חזקות לאורך החוף בסוף השבוע.",
    ),
    "kor": (
        "시의회는 화요일 저녁에 모여 공공 도서관의 새 예산을 논의했다.",
        "많은 주민들은 여름 방학 동안 도서관 개관 시간을 늘려 달라고 요청했다.",
        "보고서에 따르면 방문객 수는 지난 5년 동안 꾸준히 늘었다.",
        "박물관은 내년 봄 인쇄의 역사에 관한 새로운 전시회를 열 예정이다.",
        "시내 학교들은 어린이와 작가가 함께하는 독서 프로그램을 시작했다.",
        "기상 전문가들은 이번 주말 해안 지역에 폭우와 강풍이 올 것으로 예상한다.",
    ),
}

#: tags pages declare each language with: BCP 47 (region, script), case and '_' variants,
#: ISO 639-2/B and deprecated codes
TAGS = {
    "eng": ("en", "en-US", "en-GB", "EN", "en_US", "eng"),
    "fra": ("fr", "fr-FR", "fr-CA", "fre"),
    "deu": ("de", "de-DE", "de-AT", "ger"),
    "spa": ("es", "es-ES", "es-419", "es-MX"),
    "ita": ("it", "it-IT"),
    "por": ("pt", "pt-BR", "pt-PT"),
    "nld": ("nl", "nl-NL", "nl-BE", "dut"),
    "pol": ("pl", "pl-PL"),
    "rus": ("ru", "ru-RU"),
    "tur": ("tr", "tr-TR"),
    "swe": ("sv", "sv-SE"),
    "ara": ("ar", "ar-EG", "ar-SA"),
    "zho": ("zh", "zh-CN", "zh-Hans", "zh-TW", "zh-Hant", "cmn"),
    "jpn": ("ja", "ja-JP"),
    "ell": ("el", "el-GR"),
    "heb": ("he", "iw", "he-IL"),
    "kor": ("ko", "ko-KR"),
}
#: values pages declare that name no language: undetermined, multiple, no linguistic
#: content, private use, a language's name, empty
NO_LANGUAGE = ("und", "mul", "zxx", "x-default", "English", "")
