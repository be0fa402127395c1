El perro viejo y el informe canta raramente .
El ciudad nuevo canta hoy .
El niño nuevo espera a menudo .
El granjero abandona raramente .
Granjero canta .
El maestro viejo espera raramente .
Libro canta .
El maestro cansado canta siempre .
El casa viejo espera raramente .
El maestro viejo canta raramente .
El niño cansado y el libro duerme raramente .
El perro nuevo y el niño lee siempre .
El granjero lee hoy en Ana .
El libro trabaja aquí en Ana .
El perro bueno trabaja siempre .
El niño viejo duerme siempre .
El casa abandona aquí .
El perro abandona a menudo .
El casa trabaja siempre en París .
El granjero bueno y el casa espera a menudo .
El informe abandona siempre .
Dos niño canta con el casa .
Niño canta .
El perro pequeño espera hoy .
El libro viejo espera hoy .
El ciudad nuevo y el libro espera a menudo .
El casa bueno lee raramente .
El ciudad abandona siempre .
El maestro duerme rápidamente en Ana .
El informe viejo espera a menudo .
El perro bueno espera a menudo .
El libro viejo espera rápidamente .
El casa bueno y el maestro duerme rápidamente .
El libro bueno y el granjero trabaja a menudo .
El libro pequeño canta raramente .
El granjero viejo canta hoy .
El casa bueno trabaja siempre .
Perro lee .
El perro abandona raramente .
El granjero viejo y el ciudad lee rápidamente .
Dos niño espera con el libro .
El maestro viejo y el informe duerme a menudo .
El casa cansado lee hoy .
El perro lee a menudo en París .
El libro abandona raramente .
El perro cansado canta raramente .
El informe pequeño espera siempre .
Dos granjero canta con el maestro .
Granjero duerme .
El casa bueno lee aquí .
El libro cansado y el ciudad lee raramente .
El granjero viejo y el informe trabaja rápidamente .
El granjero pequeño canta aquí .
El informe viejo espera raramente .
El informe viejo canta raramente .
Dos libro duerme con el granjero .
El ciudad abandona rápidamente .
El niño bueno espera rápidamente .
El libro canta raramente en París .
El maestro abandona rápidamente .
El casa cansado lee a menudo .
Dos libro trabaja con el niño .
Informe canta .
El ciudad bueno espera aquí .
El perro pequeño y el niño trabaja a menudo .
El ciudad nuevo lee a menudo .
El ciudad viejo canta raramente .
El informe cansado y el ciudad lee hoy .
El granjero espera a menudo en Ana .
El ciudad nuevo y el perro duerme siempre .
Tres libro espera con el maestro .
El maestro duerme siempre en París .
Niño lee .
El ciudad pequeño espera a menudo .
El perro bueno espera rápidamente .
El maestro nuevo duerme hoy .
Dos libro duerme con el ciudad .
El ciudad viejo espera siempre .
El niño bueno duerme hoy .
El maestro bueno espera a menudo .
El casa cansado y el niño duerme rápidamente . El casa cansado y el niño duerme rápidamente . El casa cansado y el niño duerme rápidamente . El casa cansado y el niño duerme rápidamente . El casa cansado y el niño duerme rápidamente . El casa cansado y el niño duerme rápidamente .
Otra traducción .
